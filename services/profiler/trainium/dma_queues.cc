#include "services/profiler/trainium/dma_queues.h"

#include <algorithm>
#include <limits>

namespace accelopt::trainium {
namespace {

// Busy intervals kept per queue for backfilling; older ones merge into the queue's horizon.
constexpr size_t kLookBack = 32;

}  // namespace

DmaQueues::DmaQueues(const DeviceParams& params)
    : fixed_latency_ns_(params.dma_fixed_latency_ns),
      queues_(static_cast<size_t>(std::max(1.0, params.dma_queues)), EngineTimeline(kLookBack)) {}

DmaQueues::Issued DmaQueues::Issue(const DmaCost& cost, double earliest_ns) {
  const size_t needed = std::min(queues_.size(), static_cast<size_t>(std::max(cost.queues, 1)));
  const double duration = cost.queue_busy_ns;
  std::vector<size_t> idle;
  idle.reserve(queues_.size());
  double start = earliest_ns;
  while (true) {
    idle.clear();
    double next = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < queues_.size(); ++k) {
      const double earliest = queues_[k].EarliestStart(start, duration);
      if (earliest <= start) {
        idle.push_back(k);
      } else {
        next = std::min(next, earliest);
      }
    }
    if (idle.size() >= needed) break;
    start = next;  // a busy queue can take the whole transfer from here; before it, too few queues can
  }
  Issued issued;
  issued.start_ns = start;
  issued.transfer_end_ns = start + duration;
  issued.completion_ns = issued.transfer_end_ns + fixed_latency_ns_;
  for (size_t k = 0; k < needed; ++k) queues_[idle[k]].Book(start, issued.transfer_end_ns);
  intervals_.emplace_back(issued.start_ns, issued.transfer_end_ns);
  return issued;
}

double DmaQueues::BusyUnionNs() const {
  std::vector<std::pair<double, double>> sorted = intervals_;
  std::sort(sorted.begin(), sorted.end());
  double total = 0;
  double open_start = 0;
  double open_end = -1;
  for (const auto& [start, end] : sorted) {
    if (start > open_end) {
      if (open_end > open_start) total += open_end - open_start;
      open_start = start;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_start) total += open_end - open_start;
  return total;
}

}  // namespace accelopt::trainium

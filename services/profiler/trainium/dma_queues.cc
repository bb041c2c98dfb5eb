#include "services/profiler/trainium/dma_queues.h"

#include <algorithm>
#include <limits>

namespace accelopt::trainium {
namespace {

// Busy intervals kept per queue for backfilling; older ones merge into the queue's horizon.
constexpr size_t kLookBack = 32;

}  // namespace

DmaQueues::DmaQueues(const DeviceParams& params)
    : fixed_latency_ns_(params.dma_fixed_latency_ns), queues_(static_cast<size_t>(std::max(1.0, params.dma_queues))) {}

bool DmaQueues::IdleDuring(const Queue& q, double start, double end, double* retry) const {
  if (start < q.horizon_ns) {
    *retry = q.horizon_ns;
    return false;
  }
  // First interval that ends after `start`.
  auto it = std::upper_bound(q.busy.begin(), q.busy.end(), start,
                             [](double t, const std::pair<double, double>& b) { return t < b.second; });
  if (it == q.busy.end() || it->first >= end) return true;
  *retry = it->second;
  return false;
}

void DmaQueues::Book(Queue* q, double start, double end) {
  auto it = std::lower_bound(q->busy.begin(), q->busy.end(), std::make_pair(start, end));
  q->busy.insert(it, {start, end});
  if (q->busy.size() > kLookBack) {
    q->horizon_ns = std::max(q->horizon_ns, q->busy.front().second);
    q->busy.erase(q->busy.begin());
  }
}

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
      double retry = 0;
      if (IdleDuring(queues_[k], start, start + duration, &retry)) {
        idle.push_back(k);
      } else {
        next = std::min(next, retry);
      }
    }
    if (idle.size() >= needed) break;
    start = next;  // some queue frees up here; finite because a busy queue was found
  }
  Issued issued;
  issued.start_ns = start;
  issued.transfer_end_ns = start + duration;
  issued.completion_ns = issued.transfer_end_ns + fixed_latency_ns_;
  for (size_t k = 0; k < needed; ++k) Book(&queues_[idle[k]], start, issued.transfer_end_ns);
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

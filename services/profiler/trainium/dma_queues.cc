#include "services/profiler/trainium/dma_queues.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace accelopt::trainium {
namespace {

// Busy intervals kept per queue for backfilling; older ones merge into the queue's horizon.
constexpr size_t kLookBack = 32;
// A DMA fills idle gaps of its queues piece by piece, up to this many pieces; the last piece waits for a
// window that holds the rest.
constexpr int kMaxPieces = 64;

}  // namespace

DmaQueues::DmaQueues(const DeviceParams& params)
    : fixed_latency_ns_(params.dma_fixed_latency_ns),
      queues_(static_cast<size_t>(std::max(1.0, params.dma_queues)), EngineTimeline(kLookBack)) {}

DmaQueues::Issued DmaQueues::Issue(const DmaCost& cost, double earliest_ns) {
  const size_t needed = std::min(queues_.size(), static_cast<size_t>(std::max(cost.queues, 1)));
  double remaining = cost.queue_busy_ns;
  Issued issued;
  issued.start_ns = -1;
  double t = earliest_ns;
  std::vector<std::pair<double, size_t>> idle;  // (when it turns busy again, queue) of the queues idle at t
  idle.reserve(queues_.size());
  int pieces = 0;
  while (remaining > 0) {
    idle.clear();
    double next = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < queues_.size(); ++k) {
      const double free_at = queues_[k].BusyUntil(t);
      if (free_at <= t) {
        idle.emplace_back(queues_[k].IdleUntil(t), k);
      } else {
        next = std::min(next, free_at);
      }
    }
    if (idle.size() < needed) {
      t = next;  // some queue frees up here; finite because a busy queue was found
      continue;
    }
    // The `needed` idle queues that stay idle longest; the piece runs until the first of them is busy again
    // (or, at the piece limit, in one window that holds the rest).
    std::sort(idle.begin(), idle.end(), std::greater<>());
    const double window = idle[needed - 1].first - t;
    if (window < remaining && pieces + 1 >= kMaxPieces) {
      t = idle[needed - 1].first;  // the last piece does not fit: look again from where this window closes
      continue;
    }
    const double piece = std::min(window, remaining);
    for (size_t k = 0; k < needed; ++k) queues_[idle[k].second].Book(t, t + piece);
    intervals_.emplace_back(t, t + piece);
    if (issued.start_ns < 0) issued.start_ns = t;
    remaining -= piece;
    t += piece;
    issued.transfer_end_ns = t;
    ++pieces;
  }
  if (issued.start_ns < 0) issued.start_ns = issued.transfer_end_ns = t;
  issued.completion_ns = issued.transfer_end_ns + fixed_latency_ns_;
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

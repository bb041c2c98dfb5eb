#include "services/profiler/trainium/dma_queues.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace accelopt::trainium {
namespace {

// Busy intervals kept per queue for backfilling; older ones merge into the queue's horizon.
constexpr size_t kLookBack = 32;
// A DMA fills idle gaps of its queues piece by piece, up to this many pieces, and no piece shorter than
// kMinPieceNs (descriptors are not split finer).
constexpr int kMaxPieces = 64;
constexpr double kMinPieceNs = 200;

}  // namespace

DmaQueues::DmaQueues(const DeviceParams& params)
    : fixed_latency_ns_(params.dma_fixed_latency_ns), queues_(static_cast<size_t>(std::max(1.0, params.dma_queues))) {}

void DmaQueues::Book(Queue* q, double start, double end) {
  auto it = std::lower_bound(q->busy.begin(), q->busy.end(), std::make_pair(start, end));
  q->busy.insert(it, {start, end});
  if (q->busy.size() > kLookBack) {
    q->horizon_ns = std::max(q->horizon_ns, q->busy.front().second);
    q->busy.erase(q->busy.begin());
  }
}

double DmaQueues::NextBusyAfter(const Queue& q, double t) const {
  if (t < q.horizon_ns) return t;
  // First interval that ends after `t`: busy at `t` if it has started, else the next busy start.
  auto it = std::upper_bound(q.busy.begin(), q.busy.end(), t,
                             [](double x, const std::pair<double, double>& b) { return x < b.second; });
  if (it == q.busy.end()) return std::numeric_limits<double>::infinity();
  return std::max(t, it->first);
}

double DmaQueues::FreeAt(const Queue& q, double t) const {
  if (t < q.horizon_ns) return q.horizon_ns;
  auto it = std::upper_bound(q.busy.begin(), q.busy.end(), t,
                             [](double x, const std::pair<double, double>& b) { return x < b.second; });
  if (it == q.busy.end() || it->first > t) return t;
  return it->second;
}

DmaQueues::Issued DmaQueues::Issue(const DmaCost& cost, double earliest_ns) {
  const size_t needed = std::min(queues_.size(), static_cast<size_t>(std::max(cost.queues, 1)));
  double remaining = cost.queue_busy_ns;
  Issued issued;
  issued.start_ns = -1;
  double t = earliest_ns;
  std::vector<std::pair<double, size_t>> idle;  // (next busy start, queue) of the queues idle at t
  idle.reserve(queues_.size());
  int pieces = 0;
  while (remaining > 0) {
    idle.clear();
    double next = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < queues_.size(); ++k) {
      const double free_at = FreeAt(queues_[k], t);
      if (free_at <= t) {
        idle.emplace_back(NextBusyAfter(queues_[k], t), k);
      } else {
        next = std::min(next, free_at);
      }
    }
    if (idle.size() < needed) {
      t = next;  // some queue frees up here; finite because a busy queue was found
      continue;
    }
    // The `needed` idle queues that stay idle longest; the piece runs until the first of them is busy again
    // (or, past the fragment limit, in one window that fits the rest).
    std::sort(idle.begin(), idle.end(), std::greater<>());
    const double window = idle[needed - 1].first - t;
    const bool last_chance = pieces + 1 >= kMaxPieces;
    if (window < remaining && (last_chance || window < kMinPieceNs)) {
      t = idle[needed - 1].first;  // too short to use: look again from where it closes
      continue;
    }
    const double piece = std::min(window, remaining);
    for (size_t k = 0; k < needed; ++k) Book(&queues_[idle[k].second], t, t + piece);
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

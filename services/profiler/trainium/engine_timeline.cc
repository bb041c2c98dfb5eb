#include "services/profiler/trainium/engine_timeline.h"

#include <algorithm>
#include <limits>

namespace accelopt::trainium {

EngineTimeline::EngineTimeline(size_t look_back) : look_back_(look_back) {}

double EngineTimeline::EarliestStart(double ready_ns, double duration_ns) const {
  double start = std::max(ready_ns, horizon_ns_);
  // First interval that ends after `start`; walk the gaps from there.
  auto it = std::upper_bound(busy_.begin(), busy_.end(), start,
                             [](double t, const std::pair<double, double>& b) { return t < b.second; });
  for (; it != busy_.end(); ++it) {
    if (start + duration_ns <= it->first) return start;
    start = std::max(start, it->second);
  }
  return start;
}

double EngineTimeline::BusyUntil(double t_ns) const {
  double free = std::max(t_ns, horizon_ns_);
  auto it = std::upper_bound(busy_.begin(), busy_.end(), free,
                             [](double t, const std::pair<double, double>& b) { return t < b.second; });
  for (; it != busy_.end() && it->first <= free; ++it) free = std::max(free, it->second);
  return free;
}

double EngineTimeline::IdleUntil(double t_ns) const {
  auto it = std::upper_bound(busy_.begin(), busy_.end(), t_ns,
                             [](double t, const std::pair<double, double>& b) { return t < b.second; });
  if (it == busy_.end()) return std::numeric_limits<double>::infinity();
  return std::max(t_ns, it->first);
}

void EngineTimeline::Book(double start_ns, double end_ns) {
  if (look_back_ == 0) {
    horizon_ns_ = std::max(horizon_ns_, end_ns);
    return;
  }
  auto it = std::lower_bound(busy_.begin(), busy_.end(), std::make_pair(start_ns, end_ns));
  busy_.insert(it, {start_ns, end_ns});
  if (busy_.size() > look_back_) {
    horizon_ns_ = std::max(horizon_ns_, busy_.front().second);
    busy_.erase(busy_.begin());
  }
}

}  // namespace accelopt::trainium

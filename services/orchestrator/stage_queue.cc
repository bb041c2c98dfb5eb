#include "services/orchestrator/stage_queue.h"

#include "absl/time/clock.h"

namespace accelopt::orchestrator {

void StageQueue::Enqueue(absl::AnyInvocable<bool() &&> start) {
  waiting_.push_back({std::move(start), absl::Now()});
  Pump();
}

void StageQueue::Release() {
  if (active_ > 0) --active_;
  Pump();
}

void StageQueue::Pump() {
  if (pumping_) return;  // the outer Pump's loop picks up what this call would have started
  pumping_ = true;
  while (active_ < limit_ && !waiting_.empty()) {
    Waiting next = std::move(waiting_.front());
    waiting_.pop_front();
    ++active_;
    if (metrics_ != nullptr) metrics_->ObserveWait(stage_, absl::ToDoubleSeconds(absl::Now() - next.since));
    if (!std::move(next.start)()) --active_;
  }
  if (metrics_ != nullptr) metrics_->SetQueueDepth(stage_, static_cast<double>(waiting_.size()));
  pumping_ = false;
}

}  // namespace accelopt::orchestrator

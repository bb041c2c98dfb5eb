#include "services/profiler/slot_pool.h"

#include "absl/strings/str_cat.h"

namespace accelopt::profiler {

SlotPool::SlotPool(int slots, int queue_limit, std::function<void()> on_slot_freed)
    : queue_limit_(queue_limit), on_slot_freed_(std::move(on_slot_freed)) {
  for (int i = 0; i < slots; ++i) threads_.emplace_back([this, i] { Run(i); });
}

SlotPool::~SlotPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  for (auto& t : threads_) t.join();
}

absl::Status SlotPool::Submit(std::function<void(int)> task) {
  {
    absl::MutexLock lock(&mu_);
    const int slots = static_cast<int>(threads_.size());
    const int free_slots = slots - busy_ - static_cast<int>(queue_.size());
    if (free_slots <= 0 && static_cast<int>(queue_.size()) >= queue_limit_) {
      return absl::ResourceExhaustedError(absl::StrCat("worker is full: ", slots, " slots busy and ", queue_.size(),
                                                       " profiles queued (queue limit ", queue_limit_, ")"));
    }
    queue_.push_back(std::move(task));
  }
  cv_.Signal();
  return absl::OkStatus();
}

SlotPool::Stats SlotPool::stats() const {
  absl::MutexLock lock(&mu_);
  return {static_cast<int>(threads_.size()), busy_, static_cast<int>(queue_.size()), queue_limit_};
}

void SlotPool::Run(int slot) {
  while (true) {
    std::function<void(int)> task;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    task(slot);
    {
      absl::MutexLock lock(&mu_);
      --busy_;
    }
    if (on_slot_freed_) on_slot_freed_();
  }
}

}  // namespace accelopt::profiler

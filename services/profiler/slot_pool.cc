#include "services/profiler/slot_pool.h"

#include "absl/strings/str_cat.h"

namespace accelopt::profiler {

SlotPool::SlotPool(int slots, int queue_limit, std::function<void()> on_slot_freed)
    : queue_limit_(queue_limit), on_slot_freed_(std::move(on_slot_freed)) {
  for (int i = 0; i < slots; ++i) threads_.emplace_back([this, i] { Run(i); });
}

SlotPool::~SlotPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

absl::Status SlotPool::Submit(std::function<void(int)> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int slots = static_cast<int>(threads_.size());
    const int free_slots = slots - busy_ - static_cast<int>(queue_.size());
    if (free_slots <= 0 && static_cast<int>(queue_.size()) >= queue_limit_) {
      return absl::ResourceExhaustedError(absl::StrCat("worker is full: ", slots, " slots busy and ", queue_.size(),
                                                       " profiles queued (queue limit ", queue_limit_, ")"));
    }
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return absl::OkStatus();
}

SlotPool::Stats SlotPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {static_cast<int>(threads_.size()), busy_, static_cast<int>(queue_.size()), queue_limit_};
}

void SlotPool::Run(int slot) {
  while (true) {
    std::function<void(int)> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    task(slot);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_;
    }
    if (on_slot_freed_) on_slot_freed_();
  }
}

}  // namespace accelopt::profiler

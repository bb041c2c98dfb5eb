// A fixed number of worker slots with a bounded wait queue: work runs on the first free slot; when every slot
// is busy and the queue is full, Submit refuses.
//
// Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace accelopt::profiler {

class SlotPool {
 public:
  struct Stats {
    int slots = 0;
    int busy = 0;
    int queued = 0;
    int queue_limit = 0;
  };

  // `on_slot_freed` (optional) runs on the slot's thread after each task, once its slot counts as free again
  // (e.g. to update gauges: the task itself still counts as busy while it runs).
  SlotPool(int slots, int queue_limit, std::function<void()> on_slot_freed = nullptr);
  // Runs every accepted task to completion, then joins the slot threads.
  ~SlotPool();

  // Queues `task(slot)`. RESOURCE_EXHAUSTED (message names the queue limit) when all slots are busy and
  // `queue_limit` tasks are already waiting.
  absl::Status Submit(std::function<void(int slot)> task);
  Stats stats() const;

 private:
  void Run(int slot);

  const int queue_limit_;
  const std::function<void()> on_slot_freed_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::function<void(int)>> queue_ ABSL_GUARDED_BY(mu_);
  int busy_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace accelopt::profiler

// An asynchronous counting semaphore for Asio coroutines: waiting suspends the coroutine, never a thread.
#pragma once

#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "libs/llm/internal/asio_awaitable.h"

namespace accelopt::llm {

// At most `limit` holders at a time; waiters are admitted in FIFO order. Thread-safe: Acquire and Release may
// run on any threads.
class AsyncSemaphore {
 public:
  explicit AsyncSemaphore(int limit) : limit_(limit) {}
  AsyncSemaphore(const AsyncSemaphore&) = delete;
  AsyncSemaphore& operator=(const AsyncSemaphore&) = delete;

  // Completes (on the awaiting coroutine's executor) once the caller holds a permit. Pair with Release().
  boost::asio::awaitable<void> Acquire();
  // Returns a permit; hands it to the oldest waiter if any.
  void Release();

  int in_use() const {
    absl::MutexLock lock(&mu_);
    return in_use_;
  }

 private:
  mutable absl::Mutex mu_;
  const int limit_;
  int in_use_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<absl::AnyInvocable<void()>> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::llm

#include "libs/llm/async_semaphore.h"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>

namespace accelopt::llm {

boost::asio::awaitable<void> AsyncSemaphore::Acquire() {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void()>(
      [this](auto handler) {
        auto executor = boost::asio::get_associated_executor(handler);
        absl::MutexLock lock(&mu_);
        if (in_use_ < limit_) {
          ++in_use_;
          boost::asio::post(executor, std::move(handler));
          return;
        }
        waiters_.push_back(
            [handler = std::move(handler), executor]() mutable { boost::asio::post(executor, std::move(handler)); });
      },
      boost::asio::use_awaitable);
}

void AsyncSemaphore::Release() {
  absl::AnyInvocable<void()> next;
  {
    absl::MutexLock lock(&mu_);
    if (waiters_.empty()) {
      --in_use_;
      return;
    }
    next = std::move(waiters_.front());
    waiters_.pop_front();
  }
  next();  // the permit passes to the waiter; in_use_ is unchanged
}

}  // namespace accelopt::llm

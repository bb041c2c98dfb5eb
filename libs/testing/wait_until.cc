#include "libs/testing/wait_until.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"

namespace accelopt::testing {

absl::Status WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                       absl::string_view what) {
  constexpr std::chrono::milliseconds kMaxPause{50};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::chrono::milliseconds pause{1};
  while (!condition()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(what, ": not true after ", timeout.count(), " ms"));
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, kMaxPause);
  }
  return absl::OkStatus();
}

}  // namespace accelopt::testing

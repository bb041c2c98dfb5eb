// Waiting on something another process (or a server's after-response bookkeeping) will do, with no event to
// wait on: polls a condition with a short, growing backoff until it holds or a deadline passes.
// In-process waits should use absl::Notification or absl::Mutex::Await instead.
#pragma once

#include <chrono>
#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace accelopt::testing {

// Calls `condition` until it returns true (OK) or `timeout` has passed (DEADLINE_EXCEEDED naming `what`).
// The condition is always called at least once, and once more at the deadline. The pause between calls
// starts at 1 ms and doubles up to 50 ms.
absl::Status WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                       absl::string_view what = "condition");

}  // namespace accelopt::testing

#include "services/orchestrator/progress_watchdog.h"

#include "absl/strings/str_cat.h"

namespace accelopt::orchestrator {

ProgressWatchdog::ProgressWatchdog(absl::Duration stall_after, Clock now)
    : stall_after_(stall_after), now_(std::move(now)) {}

void ProgressWatchdog::ReportLoad(int queued, int idle, int workers) {
  absl::MutexLock lock(&mu_);
  queued_ = queued;
  idle_ = idle;
  workers_ = workers;
  if (queued_ > 0 && (idle_ > 0 || workers_ == 0)) {
    if (stuck_since_ == absl::InfiniteFuture()) stuck_since_ = now_();
  } else {
    stuck_since_ = absl::InfiniteFuture();
  }
}

void ProgressWatchdog::ReportProgress() {
  absl::MutexLock lock(&mu_);
  if (stuck_since_ != absl::InfiniteFuture()) stuck_since_ = now_();
}

absl::Status ProgressWatchdog::Check() const {
  absl::MutexLock lock(&mu_);
  if (stuck_since_ == absl::InfiniteFuture()) return absl::OkStatus();
  const absl::Duration stuck = now_() - stuck_since_;
  if (stuck < stall_after_) return absl::OkStatus();
  if (workers_ == 0) {
    return absl::UnavailableError(absl::StrCat("no progress for ", absl::FormatDuration(stuck), " with ", queued_,
                                               " profiles queued and no profiler worker in rotation"));
  }
  return absl::UnavailableError(absl::StrCat("no progress for ", absl::FormatDuration(stuck), " with ", queued_,
                                             " profiles queued and ", idle_, " worker slots idle"));
}

}  // namespace accelopt::orchestrator

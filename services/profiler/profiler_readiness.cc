#include "services/profiler/profiler_readiness.h"

namespace accelopt::profiler {

ProfilerReadiness::ProfilerReadiness(const KernelProfiler* profiler, absl::Duration recheck)
    : profiler_(profiler), recheck_(recheck) {}

absl::Status ProfilerReadiness::Check() {
  if (absl::Status s = profiler_->CheckReady(); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (now - sandbox_checked_at_ >= recheck_) {
    sandbox_status_ = profiler_->CheckSandboxStarts();
    sandbox_checked_at_ = now;
  }
  return sandbox_status_;
}

}  // namespace accelopt::profiler

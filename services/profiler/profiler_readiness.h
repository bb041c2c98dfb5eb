// The profiler's readiness check: its start-up checks (KernelProfiler::CheckReady) on every call, and a real
// sandbox start (KernelProfiler::CheckSandboxStarts) at most once per `recheck` period, so a worker whose
// sandbox cannot start (no user namespaces, a broken interpreter) reports NOT_SERVING instead of answering
// every profile with INFRA_ERROR.
//
// Thread-safe.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/profiler/kernel_profiler.h"

namespace accelopt::profiler {

class ProfilerReadiness {
 public:
  // `profiler` is not owned and must outlive this object.
  explicit ProfilerReadiness(const KernelProfiler* profiler, absl::Duration recheck = absl::Seconds(30));

  // OK when the worker can profile; the first failing check's error otherwise.
  absl::Status Check();

 private:
  const KernelProfiler* profiler_;
  const absl::Duration recheck_;
  absl::Mutex mu_;
  absl::Time sandbox_checked_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Status sandbox_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::profiler

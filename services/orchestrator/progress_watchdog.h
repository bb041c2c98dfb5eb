// Notices a stalled orchestrator: work is queued and capacity is idle (or there is no capacity at all: no worker
// in rotation), yet nothing progresses. Whoever owns the work feeds it (the worker pool does: queued profiles,
// idle slots its workers report, workers in rotation, dispatches and results); health reads Check() and turns
// NOT_SERVING while it fails.
#pragma once

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace accelopt::orchestrator {

// Thread-safe.
class ProgressWatchdog {
 public:
  using Clock = std::function<absl::Time()>;

  // Stalled once work has been queued with idle capacity, or with no worker in rotation, and no progress for
  // `stall_after`.
  explicit ProgressWatchdog(absl::Duration stall_after, Clock now = absl::Now);

  // The work waiting now, the capacity idle now and the workers in rotation now (each report replaces the
  // previous one).
  void ReportLoad(int queued, int idle, int workers);
  // Work started or finished.
  void ReportProgress();

  // OK, or UNAVAILABLE saying how long nothing progressed with how much work queued and capacity idle.
  absl::Status Check() const;

 private:
  const absl::Duration stall_after_;
  const Clock now_;
  mutable absl::Mutex mu_;
  int queued_ ABSL_GUARDED_BY(mu_) = 0;
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  int workers_ ABSL_GUARDED_BY(mu_) = 0;
  // Since when work has waited beside idle capacity (or with no worker) without progress; InfiniteFuture when it
  // does not.
  absl::Time stuck_since_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

}  // namespace accelopt::orchestrator

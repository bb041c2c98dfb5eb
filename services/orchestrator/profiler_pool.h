// The job engine's view of the profiler workers: how many profiles can start now, and a way to run one
// (with re-dispatch after worker failures hidden inside). WorkerPool (worker_pool.h) is the real one.
#pragma once

#include <functional>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "accelopt/v1/profiler_service.pb.h"
#include "services/orchestrator/call_handle.h"

namespace accelopt::orchestrator {

// What happened to one profile request.
struct ProfileOutcome {
  // The result the last worker returned, or why no worker produced one after every attempt (UNAVAILABLE,
  // DEADLINE_EXCEEDED, CANCELLED, ...).
  absl::StatusOr<v1::ProfileResult> result;
  // Profiles workers completed for this request (results received, including INFRA_ERROR ones retried).
  int executions = 0;
  // Times the request was re-dispatched to another worker after a failure.
  int retries = 0;
};

// Thread-safe.
class ProfilerPool {
 public:
  virtual ~ProfilerPool() = default;

  // Profiles that can start at once: free slots of healthy workers minus requests already waiting.
  virtual int FreeSlots() const = 0;

  // `listener` runs (on any thread, never under the pool's lock) whenever FreeSlots() may have grown.
  // Replaces the previous listener; an empty function removes it.
  virtual void SetCapacityListener(std::function<void()> listener) = 0;

  // Runs `request` on a free slot (waiting for one when none is free). `deadline` bounds each attempt.
  // `done` runs exactly once, on any thread.
  virtual std::shared_ptr<CallHandle> Profile(v1::ProfileRequest request, absl::Duration deadline,
                                              absl::AnyInvocable<void(ProfileOutcome) &&> done) = 0;
};

}  // namespace accelopt::orchestrator

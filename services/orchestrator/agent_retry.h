// When and how long to wait before retrying a planner, executor or memory call that failed because the
// service was briefly away (a rolling restart): UNAVAILABLE and DEADLINE_EXCEEDED are retried with jittered
// exponential backoff, within a total time bound and the call's own deadline.
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/orchestrator/orchestrator_metrics.h"

namespace accelopt::orchestrator {

struct AgentRetryPolicy {
  // The first wait; each next one doubles, up to `max_backoff`. Each wait is jittered to [50%, 100%].
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  // No retry starts later than this after the first attempt. Zero disables retries.
  absl::Duration max_elapsed = absl::Seconds(60);
};

// One retry about to happen, or (gave_up) a retried call giving up.
struct AgentRetryEvent {
  std::string agent;    // "planner", "executor" or "memory"
  std::string method;   // the RPC, e.g. "Plan"
  absl::Status status;  // what the failed attempt returned
  int retry = 0;        // 1 for the first retry; for a give-up, the retries made
  absl::Duration backoff;
  std::string job_id;  // the job the call is for ("" when the request names none)
  bool gave_up = false;
};

// How the gRPC agent clients retry. `metrics` (may be null) counts accelopt_agent_call_retries_total;
// `on_retry` (may be empty) hears every retry, and the give-up of a call that was retried, on any thread,
// e.g. to add job events.
struct AgentRetryOptions {
  AgentRetryPolicy policy;
  OrchestratorMetrics* metrics = nullptr;
  std::function<void(const AgentRetryEvent&)> on_retry;
};

// Forwards retry events to a listener set later (the job engine is built after the clients that retry).
// Thread-safe; events before Set() or after Set({}) are dropped.
class AgentRetryRelay {
 public:
  void Set(std::function<void(const AgentRetryEvent&)> listener);
  void operator()(const AgentRetryEvent& event) const;

 private:
  mutable absl::Mutex mu_;
  std::function<void(const AgentRetryEvent&)> listener_ ABSL_GUARDED_BY(mu_);
};

// UNAVAILABLE or DEADLINE_EXCEEDED: the service, not the request, failed.
bool IsRetryableAgentError(const absl::Status& status);

// The retries of one call. Not thread-safe (one call retries one attempt at a time).
class RetrySchedule {
 public:
  // `start`: the first attempt; `deadline`: the call's own deadline.
  RetrySchedule(AgentRetryPolicy policy, absl::Time start, absl::Time deadline);

  // The wait before retrying after `status` failed an attempt at `now`; nullopt when the call must give up
  // (status not retryable, or the retry would start past max_elapsed or the deadline).
  std::optional<absl::Duration> NextBackoff(const absl::Status& status, absl::Time now);

  // `status` as the call's final answer: same code, and when it was retried the message says how often for
  // how long ("... (retried 3 times for 2.5s)").
  absl::Status GiveUp(const absl::Status& status, absl::Time now) const;

  int retries() const { return retries_; }

 private:
  const AgentRetryPolicy policy_;
  const absl::Time start_;
  const absl::Time deadline_;
  int retries_ = 0;
  absl::Duration backoff_ = absl::ZeroDuration();
  std::mt19937 random_;
};

}  // namespace accelopt::orchestrator

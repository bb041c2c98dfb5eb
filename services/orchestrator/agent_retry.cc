#include "services/orchestrator/agent_retry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace accelopt::orchestrator {

void AgentRetryRelay::Set(std::function<void(const AgentRetryEvent&)> listener) {
  absl::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

void AgentRetryRelay::operator()(const AgentRetryEvent& event) const {
  absl::MutexLock lock(&mu_);
  if (listener_) listener_(event);
}

bool IsRetryableAgentError(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

RetrySchedule::RetrySchedule(AgentRetryPolicy policy, absl::Time start, absl::Time deadline)
    : policy_(policy), start_(start), deadline_(deadline), random_(std::random_device{}()) {}

std::optional<absl::Duration> RetrySchedule::NextBackoff(const absl::Status& status, absl::Time now) {
  if (!IsRetryableAgentError(status)) return std::nullopt;
  backoff_ = backoff_ == absl::ZeroDuration() ? policy_.initial_backoff : std::min(2 * backoff_, policy_.max_backoff);
  const double jitter = std::uniform_real_distribution<double>(0.5, 1.0)(random_);
  const absl::Duration wait = backoff_ * jitter;
  const absl::Time retry_at = now + wait;
  if (retry_at - start_ > policy_.max_elapsed || retry_at >= deadline_) return std::nullopt;
  ++retries_;
  return wait;
}

absl::Status RetrySchedule::GiveUp(const absl::Status& status, absl::Time now) const {
  if (retries_ == 0) return status;
  return absl::Status(
      status.code(), absl::StrCat(status.message(), " (retried ", retries_, retries_ == 1 ? " time" : " times", " for ",
                                  absl::FormatDuration(absl::Trunc(now - start_, absl::Milliseconds(1))), ")"));
}

}  // namespace accelopt::orchestrator

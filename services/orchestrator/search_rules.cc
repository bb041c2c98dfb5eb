#include "services/orchestrator/search_rules.h"

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"

namespace accelopt::orchestrator {

google::protobuf::Timestamp NowTimestamp() {
  return google::protobuf::util::TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(absl::Now()));
}

void AddUsageTo(v1::TokenUsage* total, const v1::TokenUsage& usage) {
  total->set_prompt_tokens(total->prompt_tokens() + usage.prompt_tokens());
  total->set_completion_tokens(total->completion_tokens() + usage.completion_tokens());
  total->set_reasoning_tokens(total->reasoning_tokens() + usage.reasoning_tokens());
  total->set_cost_usd(total->cost_usd() + usage.cost_usd());
  total->set_requests(total->requests() + usage.requests());
  total->set_retries(total->retries() + usage.retries());
}

v1::JobEvent StateChangedEvent(v1::JobState state, v1::StopReason reason, const std::string& message) {
  v1::JobEvent e;
  e.mutable_state_changed()->set_state(state);
  e.mutable_state_changed()->set_stop_reason(reason);
  e.mutable_state_changed()->set_message(message);
  return e;
}

v1::JobEvent NewBestEvent(const v1::Candidate& candidate, double speedup) {
  v1::JobEvent e;
  e.mutable_new_best()->set_candidate_id(candidate.candidate_id());
  e.mutable_new_best()->set_latency_ms(Latency(candidate));
  e.mutable_new_best()->set_speedup(speedup);
  if (candidate.result().has_peak_percent()) e.mutable_new_best()->set_peak_percent(candidate.result().peak_percent());
  return e;
}

StopCheck CheckStops(const v1::Job& job) {
  const v1::Budget& b = job.spec().budget();
  const int64_t tokens = job.usage().prompt_tokens() + job.usage().completion_tokens();
  if (b.max_usd() > 0 && job.usage().cost_usd() >= b.max_usd()) {
    return {v1::STOP_REASON_BUDGET_USD,
            absl::StrFormat("spent $%.4f of max_usd $%.4f", job.usage().cost_usd(), b.max_usd())};
  }
  if (b.max_tokens() > 0 && tokens >= b.max_tokens()) {
    return {v1::STOP_REASON_BUDGET_TOKENS, absl::StrFormat("used %d tokens of max_tokens %d", tokens, b.max_tokens())};
  }
  if (b.max_device_seconds() > 0 && job.stats().device_seconds() >= b.max_device_seconds()) {
    return {v1::STOP_REASON_BUDGET_DEVICE_SECONDS,
            absl::StrFormat("used %.1f device-seconds of max_device_seconds %.1f", job.stats().device_seconds(),
                            b.max_device_seconds())};
  }
  if (b.max_wall_seconds() > 0 && job.stats().wall_seconds() >= b.max_wall_seconds()) {
    return {v1::STOP_REASON_BUDGET_WALL_TIME,
            absl::StrFormat("ran %.1f s of max_wall_seconds %.1f", job.stats().wall_seconds(), b.max_wall_seconds())};
  }
  const double target = job.spec().stop().target_peak_percent();
  if (target > 0 && job.has_best_peak_percent() && job.best_peak_percent() >= target) {
    return {v1::STOP_REASON_TARGET_PEAK,
            absl::StrFormat("best kernel reached %.1f%% of peak (target %.1f%%)", job.best_peak_percent(), target)};
  }
  return {};
}

}  // namespace accelopt::orchestrator

#include "services/orchestrator/search_rules.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "services/orchestrator/search_ids.h"

namespace accelopt::orchestrator {

double Latency(const v1::Candidate& c) {
  if (c.remeasured_latency_ms().empty()) return c.result().latency().mean_ms();
  std::vector<double> all(c.remeasured_latency_ms().begin(), c.remeasured_latency_ms().end());
  all.push_back(c.result().latency().mean_ms());
  std::sort(all.begin(), all.end());
  const size_t mid = all.size() / 2;
  return all.size() % 2 == 1 ? all[mid] : (all[mid - 1] + all[mid]) / 2;
}

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

bool WasJudged(const v1::Candidate& c) {
  const v1::Verdict v = c.result().verdict();
  return v != v1::VERDICT_UNSPECIFIED && v != v1::VERDICT_NO_KERNEL && v != v1::VERDICT_INFRA_ERROR &&
         v != v1::VERDICT_CANCELLED && v != v1::VERDICT_PROBLEM_ERROR;
}

StopCheck CheckIterationJudged(int iteration, const std::vector<const v1::Candidate*>& candidates) {
  if (candidates.empty()) return {};
  int failed_calls = 0, no_kernel = 0, infra = 0, judged = 0;
  const v1::Candidate* first = nullptr;
  const v1::Candidate* first_failed_call = nullptr;
  for (const v1::Candidate* c : candidates) {
    if (c->agent_call_failed() && (first_failed_call == nullptr || c->ordinal() < first_failed_call->ordinal())) {
      first_failed_call = c;
    }
    if (WasJudged(*c)) {
      ++judged;
      continue;
    }
    if (c->result().verdict() == v1::VERDICT_INFRA_ERROR) {
      ++infra;
    } else if (c->agent_call_failed()) {
      ++failed_calls;
    } else {
      ++no_kernel;
    }
    if (first == nullptr || c->ordinal() < first->ordinal()) first = c;
  }
  const int n = static_cast<int>(candidates.size());
  StopCheck check;
  if (failed_calls > 0) {
    // Work the search promised was not done (an agent call failed even after its retries): the result would
    // not be the job's, so the job fails instead of succeeding with less.
    check.reason = v1::STOP_REASON_AGENTS_UNAVAILABLE;
    check.detail = absl::StrFormat(
        "iteration %d: %d of its %d candidates were lost to agent calls that failed after their retries; first "
        "(%s): %s",
        iteration, failed_calls, n, first_failed_call->candidate_id(), first_failed_call->error());
    return check;
  }
  if (judged > 0) return {};
  check.reason = infra == n ? v1::STOP_REASON_PROFILERS_UNAVAILABLE : v1::STOP_REASON_NO_VALID_CANDIDATE;
  const std::string& error = first->error().empty() ? first->result().message() : first->error();
  check.detail = absl::StrFormat(
      "iteration %d: none of its %d candidates was judged (%d without a kernel, %d profiler infrastructure errors); "
      "first error (%s): %s",
      iteration, n, no_kernel, infra, first->candidate_id(), error);
  return check;
}

std::string UnjudgedWaitingForProfiles(const std::vector<const v1::Candidate*>& candidates) {
  int queued = 0, profiling = 0;
  for (const v1::Candidate* c : candidates) {
    if (c->candidate_id() == kBaselineCandidateId) continue;
    if (WasJudged(*c)) return "";
    if (c->state() == v1::CANDIDATE_STATE_QUEUED) ++queued;
    if (c->state() == v1::CANDIDATE_STATE_PROFILING) ++profiling;
  }
  if (queued + profiling == 0) return "";
  return absl::StrFormat(
      "%d candidate(s) were waiting for a profiler worker (%d queued, %d being profiled) and "
      "none was judged",
      queued + profiling, queued, profiling);
}

std::string NoImprovementMessage(const std::string& message) {
  std::string text = "no improvement: no correct candidate was faster than the baseline";
  if (!message.empty()) absl::StrAppend(&text, "; ", message);
  return text;
}

}  // namespace accelopt::orchestrator

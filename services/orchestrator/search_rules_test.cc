#include "services/orchestrator/search_rules.h"

#include <gtest/gtest.h>

namespace accelopt::orchestrator {
namespace {

TEST(SearchRulesTest, NoStopWithoutBudgetsOrTarget) {
  v1::Job job;
  job.mutable_usage()->set_cost_usd(100);
  job.set_best_peak_percent(99);
  EXPECT_EQ(CheckStops(job).reason, v1::STOP_REASON_UNSPECIFIED);
}

TEST(SearchRulesTest, BudgetsAreCheckedBeforeTheTargetAndNameWhatWasUsed) {
  v1::Job job;
  job.mutable_spec()->mutable_budget()->set_max_tokens(100);
  job.mutable_spec()->mutable_stop()->set_target_peak_percent(50);
  job.set_best_peak_percent(60);
  job.mutable_usage()->set_prompt_tokens(70);
  job.mutable_usage()->set_completion_tokens(29);
  EXPECT_EQ(CheckStops(job).reason, v1::STOP_REASON_TARGET_PEAK);
  job.mutable_usage()->set_completion_tokens(30);
  StopCheck stop = CheckStops(job);
  EXPECT_EQ(stop.reason, v1::STOP_REASON_BUDGET_TOKENS);
  EXPECT_EQ(stop.detail, "used 100 tokens of max_tokens 100");
}

TEST(SearchRulesTest, EachBudgetStopsWithItsReason) {
  v1::Job usd;
  usd.mutable_spec()->mutable_budget()->set_max_usd(1);
  usd.mutable_usage()->set_cost_usd(1.5);
  EXPECT_EQ(CheckStops(usd).reason, v1::STOP_REASON_BUDGET_USD);
  v1::Job device;
  device.mutable_spec()->mutable_budget()->set_max_device_seconds(10);
  device.mutable_stats()->set_device_seconds(10);
  EXPECT_EQ(CheckStops(device).reason, v1::STOP_REASON_BUDGET_DEVICE_SECONDS);
  v1::Job wall;
  wall.mutable_spec()->mutable_budget()->set_max_wall_seconds(5);
  wall.mutable_stats()->set_wall_seconds(4.9);
  EXPECT_EQ(CheckStops(wall).reason, v1::STOP_REASON_UNSPECIFIED);
  wall.mutable_stats()->set_wall_seconds(5);
  EXPECT_EQ(CheckStops(wall).reason, v1::STOP_REASON_BUDGET_WALL_TIME);
}

TEST(SearchRulesTest, UsageAddsUpEveryCounter) {
  v1::TokenUsage total;
  v1::TokenUsage usage;
  usage.set_prompt_tokens(10);
  usage.set_completion_tokens(5);
  usage.set_reasoning_tokens(2);
  usage.set_cost_usd(0.25);
  usage.set_requests(1);
  usage.set_retries(3);
  AddUsageTo(&total, usage);
  AddUsageTo(&total, usage);
  EXPECT_EQ(total.prompt_tokens(), 20);
  EXPECT_EQ(total.completion_tokens(), 10);
  EXPECT_EQ(total.reasoning_tokens(), 4);
  EXPECT_DOUBLE_EQ(total.cost_usd(), 0.5);
  EXPECT_EQ(total.requests(), 2);
  EXPECT_EQ(total.retries(), 6);
}

TEST(SearchRulesTest, OnlyOkCandidatesWithALatencyAreOk) {
  v1::Candidate c;
  c.mutable_result()->set_verdict(v1::VERDICT_OK);
  EXPECT_FALSE(IsOk(c));
  c.mutable_result()->mutable_latency()->set_mean_ms(1.5);
  EXPECT_TRUE(IsOk(c));
  EXPECT_DOUBLE_EQ(Latency(c), 1.5);
  c.mutable_result()->set_verdict(v1::VERDICT_INCORRECT);
  EXPECT_FALSE(IsOk(c));
}

TEST(SearchRulesTest, NewBestEventCarriesPeakOnlyWhenMeasured) {
  v1::Candidate c;
  c.set_candidate_id("i001-x");
  c.mutable_result()->mutable_latency()->set_mean_ms(0.5);
  v1::JobEvent e = NewBestEvent(c, 2.0);
  EXPECT_EQ(e.new_best().candidate_id(), "i001-x");
  EXPECT_DOUBLE_EQ(e.new_best().latency_ms(), 0.5);
  EXPECT_DOUBLE_EQ(e.new_best().speedup(), 2.0);
  EXPECT_FALSE(e.new_best().has_peak_percent());
  c.mutable_result()->set_peak_percent(40);
  EXPECT_DOUBLE_EQ(NewBestEvent(c, 2.0).new_best().peak_percent(), 40);
}

v1::Candidate Unjudged(const std::string& id, int64_t ordinal, v1::Verdict verdict, bool call_failed,
                       const std::string& error) {
  v1::Candidate c;
  c.set_candidate_id(id);
  c.set_ordinal(ordinal);
  c.mutable_result()->set_verdict(verdict);
  c.mutable_result()->set_message(error);
  if (verdict == v1::VERDICT_NO_KERNEL) c.set_error(error);
  c.set_agent_call_failed(call_failed);
  return c;
}

TEST(SearchRulesTest, AnIterationWithOneJudgedCandidateHasNotFailed) {
  v1::Candidate down = Unjudged("a", 1, v1::VERDICT_NO_KERNEL, true, "planner call failed: down");
  v1::Candidate incorrect = Unjudged("b", 2, v1::VERDICT_INCORRECT, false, "");
  v1::Candidate duplicate = Unjudged("c", 3, v1::VERDICT_DUPLICATE, false, "");
  EXPECT_EQ(CheckIterationJudged(1, {&incorrect, &duplicate}).reason, v1::STOP_REASON_UNSPECIFIED);
  EXPECT_EQ(CheckIterationJudged(1, {}).reason, v1::STOP_REASON_UNSPECIFIED);
  // One candidate lost to a failed agent call is work the search did not do: the job fails, never succeeds
  // with less.
  StopCheck partial = CheckIterationJudged(1, {&down, &incorrect});
  EXPECT_EQ(partial.reason, v1::STOP_REASON_AGENTS_UNAVAILABLE);
  EXPECT_EQ(partial.detail,
            "iteration 1: 1 of its 2 candidates were lost to agent calls that failed after their retries; first "
            "(a): planner call failed: down");
}

TEST(SearchRulesTest, AnIterationWithNothingJudgedFailsNamingTheFaultAndTheFirstError) {
  v1::Candidate down1 = Unjudged("late", 7, v1::VERDICT_NO_KERNEL, true, "executor call failed: later");
  v1::Candidate down2 = Unjudged("early", 3, v1::VERDICT_NO_KERNEL, true, "planner call failed: first");
  StopCheck agents = CheckIterationJudged(2, {&down1, &down2});
  EXPECT_EQ(agents.reason, v1::STOP_REASON_AGENTS_UNAVAILABLE);
  EXPECT_EQ(agents.detail,
            "iteration 2: 2 of its 2 candidates were lost to agent calls that failed after their retries; first "
            "(early): planner call failed: first");

  v1::Candidate infra = Unjudged("p", 4, v1::VERDICT_INFRA_ERROR, false, "no profiler worker produced a result: x");
  EXPECT_EQ(CheckIterationJudged(1, {&infra}).reason, v1::STOP_REASON_PROFILERS_UNAVAILABLE);
  EXPECT_EQ(CheckIterationJudged(1, {&infra, &down1}).reason, v1::STOP_REASON_AGENTS_UNAVAILABLE);

  v1::Candidate no_code = Unjudged("m", 1, v1::VERDICT_NO_KERNEL, false, "no code block in the answer");
  StopCheck model = CheckIterationJudged(1, {&no_code, &infra});
  EXPECT_EQ(model.reason, v1::STOP_REASON_NO_VALID_CANDIDATE);
  EXPECT_NE(model.detail.find("first error (m): no code block"), std::string::npos);
}

TEST(SearchRulesTest, CandidatesWaitingForProfilesWithNoneJudgedAreNamed) {
  v1::Candidate baseline = Unjudged("i000-baseline", 0, v1::VERDICT_OK, false, "");
  v1::Candidate queued = Unjudged("a", 1, v1::VERDICT_UNSPECIFIED, false, "");
  queued.set_state(v1::CANDIDATE_STATE_QUEUED);
  v1::Candidate profiling = Unjudged("b", 2, v1::VERDICT_UNSPECIFIED, false, "");
  profiling.set_state(v1::CANDIDATE_STATE_PROFILING);
  v1::Candidate no_kernel = Unjudged("c", 3, v1::VERDICT_NO_KERNEL, false, "no code block");
  EXPECT_EQ(UnjudgedWaitingForProfiles({&baseline, &queued, &profiling, &no_kernel}),
            "2 candidate(s) were waiting for a profiler worker (1 queued, 1 being profiled) and none was judged");
  // One judged candidate: the search did work, a budget stop is an ordinary end.
  v1::Candidate incorrect = Unjudged("d", 4, v1::VERDICT_INCORRECT, false, "");
  EXPECT_EQ(UnjudgedWaitingForProfiles({&baseline, &queued, &incorrect}), "");
  // Nothing waiting for a profiler (the baseline alone, or candidates still with the agents): not this failure.
  EXPECT_EQ(UnjudgedWaitingForProfiles({&baseline}), "");
  EXPECT_EQ(UnjudgedWaitingForProfiles({&baseline, &no_kernel}), "");
}

TEST(SearchRulesTest, NoImprovementMessageKeepsTheStopDetail) {
  EXPECT_EQ(NoImprovementMessage(""), "no improvement: no correct candidate was faster than the baseline");
  EXPECT_EQ(NoImprovementMessage("spent $1"),
            "no improvement: no correct candidate was faster than the baseline; spent $1");
}

}  // namespace
}  // namespace accelopt::orchestrator

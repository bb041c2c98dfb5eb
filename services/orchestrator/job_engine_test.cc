#include "services/orchestrator/job_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/search_rules.h"
#include "services/orchestrator/testing/engine_test_helpers.h"
#include "services/orchestrator/testing/fake_clients.h"
#include "services/orchestrator/testing/job_engine_fixture.h"

namespace accelopt::orchestrator {
namespace {

using testing::Await;
using testing::FakeExecutor;
using testing::FakeKernel;
using testing::FakeLatency;
using testing::FakeMemory;
using testing::FakePlanner;
using testing::FakeProfilerPool;
using testing::Finished;
using testing::JobEngineTest;
using testing::RecordingSink;
using testing::Spec;
using testing::WaitFor;

TEST_F(JobEngineTest, SearchRunsToCompletionWithConsistentNumbers) {
  StartEngine();
  v1::Job job = WaitFinished(Submit(Spec(2, 2, 2, 2)).job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_ITERATIONS_DONE);
  EXPECT_EQ(job.iterations_done(), 2);
  auto candidates = Candidates(job.job_id());
  // Baseline, 1 parent x 2 plans x 2 samples, then 2 parents x 4.
  EXPECT_EQ(candidates.size(), 1u + 4u + 8u);
  ExpectConsistent(job, candidates);
  EXPECT_GT(job.best_speedup(), 1.0);
  // Planner 2 calls x 240 tokens + 3 parents... usage is the sum of the agents' usage.
  EXPECT_EQ(job.usage_by_agent().at("planner").prompt_tokens(), 3 * 200);
  EXPECT_EQ(job.usage_by_agent().at("executor").prompt_tokens(), 6 * 200);
  EXPECT_EQ(memory_.summarize_requests().size(), 2u);
  EXPECT_EQ(static_cast<size_t>(job.experiences_added()), memory_.experiences(job.job_id()).size());
  EXPECT_EQ(memory_.summarize_requests()[0].namespace_(), job.job_id());

  auto events = Events(job.job_id());
  ASSERT_FALSE(events.empty());
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].sequence(), static_cast<int64_t>(i + 1));
  EXPECT_EQ(events.back().state_changed().state(), v1::JOB_STATE_SUCCEEDED);
}

// Finished jobs by state and stop reason, job and iteration durations, and the per-job best speedup that
// ends with the job: what the alerts and the dashboard read.
TEST_F(JobEngineTest, MetricsCountFinishedJobsAndTheirDurations) {
  prometheus::Registry registry;
  OrchestratorMetrics metrics = OrchestratorMetrics::Create(registry);
  pool_->set_device_seconds(0.01);
  StartEngine({}, &metrics);
  v1::Job done = WaitFinished(Submit(Spec(2, 2, 2, 2)).job_id());
  ASSERT_EQ(done.stop_reason(), v1::STOP_REASON_ITERATIONS_DONE);
  v1::JobSpec budget = Spec(5, 2, 2, 2);
  budget.mutable_budget()->set_max_usd(0.004);
  v1::Job stopped = WaitFinished(Submit(budget).job_id());
  ASSERT_EQ(stopped.stop_reason(), v1::STOP_REASON_BUDGET_USD);

  auto finished = [&](const std::string& reason) {
    return metrics.jobs_finished.Add({{"state", "succeeded"}, {"stop_reason", reason}}).Value();
  };
  EXPECT_EQ(finished("ITERATIONS_DONE"), 1);
  EXPECT_EQ(finished("BUDGET_USD"), 1);
  const auto durations =
      metrics.job_duration.Add({{"state", "succeeded"}}, prometheus::Histogram::BucketBoundaries{}).Collect().histogram;
  EXPECT_EQ(durations.sample_count, 2u);
  EXPECT_GT(durations.sample_sum, 0);
  EXPECT_EQ(metrics.iteration_duration.Collect().histogram.sample_count,
            static_cast<uint64_t>(done.iterations_done() + stopped.iterations_done()));
  EXPECT_EQ(metrics.iterations.Value(), done.iterations_done() + stopped.iterations_done());
  EXPECT_FALSE(metrics.best_speedup.Has({{"job_id", done.job_id()}}));
  EXPECT_EQ(metrics.store_errors.Value(), 0);
}

TEST_F(JobEngineTest, SlowerChildrenNeverReplaceTheirParent) {
  executor_.SetHandler([](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    v1::ImplementResponse response;
    const double parent = FakeLatency(r.kernel().source()).value();
    for (int i = 0; i < r.num_samples(); ++i) {
      response.add_samples()->mutable_kernel()->set_source(FakeKernel(parent * (1.5 + i), absl::StrCat(r.seed(), i)));
    }
    return response;
  });
  StartEngine();
  v1::Job job = WaitFinished(Submit(Spec(2, 2, 2, 2)).job_id());
  EXPECT_EQ(job.best_candidate_id(), kBaselineCandidateId);
  EXPECT_DOUBLE_EQ(job.best_speedup(), 1.0);
  std::vector<std::string> beam2;
  for (const auto& e : Events(job.job_id())) {
    if (e.has_iteration_started() && e.iteration_started().iteration() == 2) {
      beam2.assign(e.iteration_started().beam().begin(), e.iteration_started().beam().end());
    }
  }
  ASSERT_EQ(beam2.size(), 2u);
  EXPECT_EQ(beam2[0], kBaselineCandidateId);
}

// Only plan 0 of each parent yields a correct (faster) kernel; the others are incorrect.
absl::StatusOr<v1::ImplementResponse> OnlyPlanZeroWorks(const v1::ImplementRequest& r) {
  v1::ImplementResponse response;
  const bool works = absl::StartsWith(r.plan().text(), "plan 0 ");
  const double parent = FakeLatency(r.kernel().source()).value_or(1.0);
  for (int i = 0; i < r.num_samples(); ++i) {
    const std::string tag = absl::StrCat(r.seed(), "|", i);
    response.add_samples()->mutable_kernel()->set_source(works ? FakeKernel(parent * 0.9, tag)
                                                               : absl::StrCat("# verdict=INCORRECT\n# ", tag, "\n"));
  }
  return response;
}

TEST_F(JobEngineTest, ReferenceBeamKeepsAskingForBTimesNPlansWhenOnePlanInNWorks) {
  executor_.SetHandler(&OnlyPlanZeroWorks);
  StartEngine();
  // B=3, N=3, K=1: iteration 1 has one parent and one correct child; the beam is padded back to 3.
  v1::Job job = WaitFinished(Submit(Spec(2, 3, 3, 1)).job_id());
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  const std::vector<v1::PlanRequest> plans = planner_.requests();
  ASSERT_EQ(plans.size(), 1u + 3u);
  int asked = 0;
  for (size_t i = 1; i < plans.size(); ++i) asked += plans[i].num_plans();
  EXPECT_EQ(asked, 3 * 3);
  // Copies of a parent ask with seeds of their own, so their plans and candidates are distinct.
  EXPECT_NE(plans[2].seed(), plans[3].seed());
  int second = 0;
  for (const v1::Candidate& c : Candidates(job.job_id())) second += c.iteration() == 2 ? 1 : 0;
  EXPECT_EQ(second, 3 * 3 * 1);
  ExpectConsistent(job, Candidates(job.job_id()));
}

TEST_F(JobEngineTest, DistinctBeamShrinksWhenModelsFail) {
  executor_.SetHandler(&OnlyPlanZeroWorks);
  StartEngine();
  v1::JobSpec spec = Spec(2, 3, 3, 1);
  spec.mutable_search()->set_beam_policy(v1::BEAM_POLICY_DISTINCT);
  v1::Job job = WaitFinished(Submit(spec).job_id());
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  // The baseline and its one correct child: 2 parents in iteration 2.
  EXPECT_EQ(planner_.requests().size(), 1u + 2u);
}

// On hardware a first timing can be lucky: here every later measurement of a kernel reads 3x its first. With
// reprofile_beam each beam member is measured again once per iteration from iteration 2 on, and ranked by
// the median of its measurements.
TEST_F(JobEngineTest, ReprofiledBeamMembersAreRankedByTheMedianOfTheirMeasurements) {
  pool_->set_repeat_latency_factor(3.0);
  StartEngine();
  v1::JobSpec spec = Spec(3, 2, 2, 1);
  spec.mutable_search()->set_reprofile_beam(true);
  v1::Job job = WaitFinished(Submit(spec).job_id());
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  std::map<std::string, v1::Candidate> by_id;
  for (const v1::Candidate& c : Candidates(job.job_id())) by_id[c.candidate_id()] = c;
  std::map<int, std::vector<std::string>> beams;
  for (const auto& e : Events(job.job_id())) {
    if (e.has_iteration_started()) {
      beams[e.iteration_started().iteration()].assign(e.iteration_started().beam().begin(),
                                                      e.iteration_started().beam().end());
    }
  }
  ASSERT_EQ(beams.size(), 3u);
  int remeasures = 0;
  for (const auto& [id, c] : by_id) {
    int expected = 0;  // one per iteration >= 2 whose beam holds it (copies count once)
    for (int t : {2, 3}) expected += absl::c_linear_search(beams[t], id) ? 1 : 0;
    EXPECT_EQ(c.remeasured_latency_ms_size(), expected) << id;
    remeasures += expected;
    for (double later : c.remeasured_latency_ms()) EXPECT_DOUBLE_EQ(later, 3 * c.result().latency().mean_ms());
  }
  EXPECT_GT(remeasures, 0);
  EXPECT_EQ(job.stats().profiles_run(), static_cast<int64_t>(by_id.size()) + remeasures);
  // The best is the fastest by the median: a kernel measured twice has median 2x its first timing, so an
  // unrepeated kernel up to 2x slower at first sight wins over it.
  const v1::Candidate& best = by_id.at(job.best_candidate_id());
  for (const auto& [id, c] : by_id) {
    if (c.result().verdict() != v1::VERDICT_OK) continue;
    EXPECT_LE(Latency(best), Latency(c)) << id;
  }
  EXPECT_DOUBLE_EQ(job.best_latency_ms(), Latency(best));
  EXPECT_DOUBLE_EQ(job.best_speedup(), job.baseline_latency_ms() / Latency(best));
  // The baseline was in iteration 2's beam (B=2 holds it or a copy), so its own latency is a median too.
  if (by_id.at(kBaselineCandidateId).remeasured_latency_ms_size() > 0) {
    EXPECT_DOUBLE_EQ(job.baseline_latency_ms(), Latency(by_id.at(kBaselineCandidateId)));
  }
}

TEST_F(JobEngineTest, DuplicateKernelsAreRecordedButNotProfiled) {
  executor_.SetHandler([](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    v1::ImplementResponse response;
    for (int i = 0; i < r.num_samples(); ++i)
      response.add_samples()->mutable_kernel()->set_source(FakeKernel(0.9, "same"));
    return response;
  });
  StartEngine();
  v1::Job job = WaitFinished(Submit(Spec(1, 1, 2, 2)).job_id());
  auto candidates = Candidates(job.job_id());
  ASSERT_EQ(candidates.size(), 5u);
  EXPECT_EQ(job.candidates().at("DUPLICATE"), 3);
  EXPECT_EQ(job.candidates().at("OK"), 2);
  std::string original;
  for (const auto& c : candidates) {
    if (c.iteration() == 1 && c.result().verdict() == v1::VERDICT_OK) original = c.candidate_id();
  }
  for (const auto& c : candidates) {
    if (c.result().verdict() == v1::VERDICT_DUPLICATE) {
      EXPECT_EQ(c.duplicate_of(), original);
    }
  }
  EXPECT_EQ(pool_->executions().at(original), 1);
  ExpectConsistent(job, candidates);
}

// What a job's candidates say, by their place in the search (Candidate.ordinal), without ids or times: the verdict,
// the ordinal of the candidate a DUPLICATE repeats, and the latency.
std::map<int64_t, std::string> Outcomes(const std::vector<v1::Candidate>& candidates) {
  std::map<std::string, int64_t> ordinal_of;
  for (const v1::Candidate& c : candidates) ordinal_of[c.candidate_id()] = c.ordinal();
  std::map<int64_t, std::string> outcomes;
  for (const v1::Candidate& c : candidates) {
    outcomes[c.ordinal()] =
        absl::StrCat(v1::Verdict_Name(c.result().verdict()),
                     c.duplicate_of().empty() ? "" : absl::StrCat(" of ", ordinal_of.at(c.duplicate_of())), " ",
                     c.result().latency().mean_ms(), " ", c.speedup_vs_parent());
  }
  return outcomes;
}

// Two plans give the same kernel. Whichever executor call answers first, the candidate earlier in the search's
// order is the original and the other its DUPLICATE: when the later one answered first, its finished profile
// (the fake pool judges at once) or its running one becomes the earlier candidate's, and its verdict is
// corrected. The job's candidates, counts and best are the same as when the calls answer in order.
TEST_F(JobEngineTest, TheOriginalOfIdenticalKernelsDoesNotDependOnWhichCallAnsweredFirst) {
  executor_.SetHandler([](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    v1::ImplementResponse response;
    response.add_samples()->mutable_kernel()->set_source(FakeKernel(0.8, "same"));
    return response;
  });
  executor_.SetHold(true);
  StartEngine();
  auto run = [&](bool reverse, bool hold_profiles) {
    if (hold_profiles) pool_->HoldAfter(pool_->dispatched() + 1);  // the baseline is answered, the rest held
    const std::string id = Submit(Spec(1, 1, 3, 1)).job_id();
    EXPECT_TRUE(WaitFor([&] { return executor_.held().size() == 3; }));
    if (reverse) {
      // The last plan's kernel first; its profile finishes (or is held running) before the others answer.
      EXPECT_TRUE(executor_.held().ReleaseNewest());
      if (hold_profiles) {
        EXPECT_TRUE(WaitFor([&] { return pool_->held().size() == 1; }));
      } else {
        EXPECT_TRUE(WaitFor([&] { return Get(id).stats().profiles_run() == 2; }));
      }
      executor_.held().ReleaseNewestFirst();
    } else {
      executor_.held().ReleaseAll();
    }
    if (hold_profiles) {
      EXPECT_TRUE(WaitFor([&] {
        const auto counts = Get(id).candidates();
        return counts.count("DUPLICATE") > 0 && counts.at("DUPLICATE") == 2;
      }));
      pool_->HoldAfter(1 << 20);
      pool_->held().ReleaseAll();
    }
    v1::Job job = WaitFinished(id);
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
    auto candidates = Candidates(id);
    ExpectConsistent(job, candidates);
    return std::make_pair(job, candidates);
  };
  auto [in_order, in_order_candidates] = run(false, false);
  const std::map<int64_t, std::string> expected = Outcomes(in_order_candidates);
  EXPECT_EQ(in_order.candidates().at("DUPLICATE"), 2);
  int64_t first_child = -1;
  for (const v1::Candidate& c : in_order_candidates) {
    if (c.iteration() == 1 && (first_child < 0 || c.ordinal() < first_child)) first_child = c.ordinal();
  }
  EXPECT_TRUE(absl::StartsWith(expected.at(first_child), "VERDICT_OK")) << expected.at(first_child);

  for (bool hold_profiles : {false, true}) {
    SCOPED_TRACE(hold_profiles ? "the later candidate's profile was running" : "it had finished");
    auto [reversed, reversed_candidates] = run(true, hold_profiles);
    EXPECT_EQ(Outcomes(reversed_candidates), expected);
    using Counts = std::map<std::string, int64_t>;
    EXPECT_EQ(Counts(reversed.candidates().begin(), reversed.candidates().end()),
              Counts(in_order.candidates().begin(), in_order.candidates().end()));
    EXPECT_DOUBLE_EQ(reversed.best_speedup(), in_order.best_speedup());
    for (const v1::Candidate& c : reversed_candidates) {
      if (c.candidate_id() == reversed.best_candidate_id()) {
        EXPECT_EQ(c.ordinal(), first_child);
      }
    }
  }
}

// Failed samples and failed calls become NO_KERNEL verdicts with their errors; a call that failed (after its
// retries) then fails the job at the end of its iteration (AGENTS_UNAVAILABLE) instead of succeeding with less.
TEST_F(JobEngineTest, FailedAgentSamplesBecomeVerdictsAndAFailedCallFailsTheJob) {
  planner_.SetHandler([](const v1::PlanRequest& r) -> absl::StatusOr<v1::PlanResponse> {
    v1::PlanResponse response;
    response.add_samples()->mutable_plan()->set_text("first plan");
    response.add_samples()->mutable_plan()->set_text("second plan");
    for (int j = 2; j < r.num_plans(); ++j) response.add_samples()->set_error("model returned nothing");
    return response;
  });
  int calls = 0;
  executor_.SetHandler([&calls](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    if (calls++ % 2 == 1) return absl::UnavailableError("executor down");
    v1::ImplementResponse response;
    response.add_samples()->mutable_kernel()->set_source(FakeKernel(0.8, absl::StrCat(r.seed())));
    response.add_samples()->set_error("no code block in the answer");
    return response;
  });
  StartEngine();
  v1::Job job = WaitFinished(Submit(Spec(2, 1, 3, 2)).job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_AGENTS_UNAVAILABLE);
  auto candidates = Candidates(job.job_id());
  EXPECT_EQ(candidates.size(), 1u + 6u);  // the baseline and iteration 1
  bool saw_no_plan = false, saw_no_code = false, saw_executor_down = false;
  for (const auto& c : candidates) {
    if (c.result().verdict() != v1::VERDICT_NO_KERNEL) continue;
    saw_no_plan |= c.error().find("model returned nothing") != std::string::npos;
    saw_no_code |= c.error().find("no code block") != std::string::npos;
    saw_executor_down |= c.error().find("executor down") != std::string::npos;
  }
  EXPECT_TRUE(saw_no_plan && saw_no_code && saw_executor_down);
  ExpectConsistent(job, candidates);
}

TEST_F(JobEngineTest, TheSameSeedGivesTheSameSearch) {
  StartEngine();
  auto signature = [&](const v1::Job& job) {
    std::vector<std::string> sig;
    for (const auto& c : Candidates(job.job_id())) {
      sig.push_back(absl::StrCat(c.ordinal(), ":", c.kernel().sha256(), ":", c.result().verdict()));
    }
    return sig;
  };
  v1::Job a = WaitFinished(Submit(Spec(2, 2, 2, 2, 11)).job_id());
  v1::Job b = WaitFinished(Submit(Spec(2, 2, 2, 2, 11)).job_id());
  v1::Job c = WaitFinished(Submit(Spec(2, 2, 2, 2, 12)).job_id());
  EXPECT_EQ(signature(a), signature(b));
  EXPECT_NE(signature(a), signature(c));
  EXPECT_DOUBLE_EQ(a.best_latency_ms(), b.best_latency_ms());
}

TEST_F(JobEngineTest, IncorrectBaselineFailsTheJob) {
  StartEngine();
  v1::JobSpec spec = Spec(1, 1, 1, 1);
  spec.mutable_baseline()->set_source("# verdict=INCORRECT\n");
  v1::Job job = WaitFinished(Submit(spec).job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_ERROR);
  EXPECT_NE(job.message().find("INCORRECT"), std::string::npos) << job.message();
  EXPECT_EQ(planner_.calls(), 0);
}

// A reference that cannot make inputs fails the job naming the problem, not the profilers or the kernel.
TEST_F(JobEngineTest, AnUnusableProblemFailsTheJobSayingSo) {
  StartEngine();
  v1::JobSpec spec = Spec(1, 1, 1, 1);
  spec.mutable_baseline()->set_source("# verdict=PROBLEM_ERROR\n");
  v1::Job job = WaitFinished(Submit(spec).job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_ERROR);
  EXPECT_EQ(job.message().rfind("the problem cannot be used (no kernel was at fault): ", 0), 0u) << job.message();
  EXPECT_EQ(job.stats().profiles_run(), 1);  // judged once, not re-dispatched
  EXPECT_EQ(planner_.calls(), 0);
}

struct BudgetCase {
  const char* name;
  std::function<void(v1::JobSpec*)> set;
  v1::StopReason reason;
};

TEST_F(JobEngineTest, EachBudgetStopsTheJobCleanlyWithItsReason) {
  pool_->set_device_seconds(0.01);
  StartEngine();
  const std::vector<BudgetCase> cases = {
      {"usd", [](v1::JobSpec* s) { s->mutable_budget()->set_max_usd(0.004); }, v1::STOP_REASON_BUDGET_USD},
      {"tokens", [](v1::JobSpec* s) { s->mutable_budget()->set_max_tokens(500); }, v1::STOP_REASON_BUDGET_TOKENS},
      {"device", [](v1::JobSpec* s) { s->mutable_budget()->set_max_device_seconds(0.035); },
       v1::STOP_REASON_BUDGET_DEVICE_SECONDS},
  };
  for (const BudgetCase& c : cases) {
    v1::JobSpec spec = Spec(5, 2, 2, 2);
    c.set(&spec);
    v1::Job job = WaitFinished(Submit(spec).job_id());
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << c.name;
    EXPECT_EQ(job.stop_reason(), c.reason) << c.name;
    EXPECT_LT(job.iterations_done(), 5) << c.name;
    EXPECT_FALSE(job.best_candidate_id().empty()) << c.name;
    bool budget_event = false;
    for (const auto& e : Events(job.job_id())) budget_event |= e.budget_exhausted().reason() == c.reason;
    EXPECT_TRUE(budget_event) << c.name;
    ExpectConsistent(job, Candidates(job.job_id()));
  }
}

TEST_F(JobEngineTest, WallTimeBudgetStopsAJobWaitingOnAgents) {
  executor_.SetHold(true);
  StartEngine();
  v1::JobSpec spec = Spec(3, 1, 1, 1);
  spec.mutable_budget()->set_max_wall_seconds(0.2);
  v1::Job job = WaitFinished(Submit(spec).job_id());
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_BUDGET_WALL_TIME);
  EXPECT_GE(job.stats().wall_seconds(), 0.2);
  EXPECT_EQ(executor_.held().cancelled(), 1);
}

TEST_F(JobEngineTest, TargetPeakStopsTheJob) {
  pool_->set_peak_ms(0.5);  // baseline at 1.0 ms is 50% of peak
  StartEngine();
  v1::JobSpec spec = Spec(10, 2, 3, 2);
  spec.mutable_stop()->set_target_peak_percent(55);
  v1::Job job = WaitFinished(Submit(spec).job_id());
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_TARGET_PEAK);
  EXPECT_GE(job.best_peak_percent(), 55);
  EXPECT_DOUBLE_EQ(job.baseline_peak_percent(), 50);
}

TEST_F(JobEngineTest, CancelStopsInFlightWork) {
  pool_->HoldAfter(1);  // the baseline is answered; every child profile hangs
  StartEngine();
  const std::string id = Submit(Spec(3, 2, 2, 2)).job_id();
  ASSERT_TRUE(WaitFor([&] { return pool_->held().size() == 4; }));
  auto cancelled = Await<v1::Job>([&](Callback<v1::Job> done) { engine_->CancelJob(id, std::move(done)); });
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled->stop_reason(), v1::STOP_REASON_CANCELLED);
  EXPECT_EQ(pool_->held().cancelled(), 4);
  EXPECT_EQ(cancelled->candidates().at("CANCELLED"), 4);
  ExpectConsistent(*cancelled, Candidates(id));
  // Cancelling again is a no-op.
  auto again = Await<v1::Job>([&](Callback<v1::Job> done) { engine_->CancelJob(id, std::move(done)); });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(Events(id).size(), Events(id).back().sequence());
}

TEST_F(JobEngineTest, ResumeAfterACrashNeverReprofilesOrReplansFinishedWork) {
  pool_->HoldAfter(6);
  StartEngine();
  const std::string id = Submit(Spec(2, 2, 2, 2)).job_id();
  ASSERT_TRUE(WaitFor([&] { return Get(id).stats().profiles_run() == 6 && pool_->held().size() > 0; }));
  auto before = pool_->executions();
  const int plans_before = planner_.calls();
  Crash();

  pool_ = std::make_unique<FakeProfilerPool>(4);
  StartEngine();
  v1::Job job = WaitFinished(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  auto after = pool_->executions();
  std::set<std::string> profiled;
  for (const auto& [candidate, n] : before) {
    EXPECT_EQ(n, 1) << candidate;
    EXPECT_EQ(after.count(candidate), 0u) << candidate << " was profiled again after the restart";
    profiled.insert(candidate);
  }
  for (const auto& [candidate, n] : after) {
    EXPECT_EQ(n, 1) << candidate;
    profiled.insert(candidate);
  }
  EXPECT_EQ(job.stats().profiles_run(), static_cast<int64_t>(profiled.size()));
  // Each (iteration, parent) was planned exactly once across both engines.
  std::set<uint64_t> seeds;
  for (const auto& r : planner_.requests()) EXPECT_TRUE(seeds.insert(r.seed()).second) << "plan asked twice";
  EXPECT_GE(planner_.calls(), plans_before);
  ExpectConsistent(job, Candidates(id));
  auto events = Events(id);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].sequence(), static_cast<int64_t>(i + 1));
}

TEST_F(JobEngineTest, ResumeRequeuesAQueuedJob) {
  JobEngine::Options options;
  options.max_running_jobs = 1;
  pool_->HoldAfter(0);
  StartEngine(options);
  const std::string first = Submit(Spec(1, 1, 1, 1)).job_id();
  const std::string second = Submit(Spec(1, 1, 1, 1)).job_id();
  EXPECT_EQ(Get(second).state(), v1::JOB_STATE_QUEUED);
  Crash();
  pool_ = std::make_unique<FakeProfilerPool>(4);
  StartEngine(options);
  EXPECT_EQ(WaitFinished(first).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(WaitFinished(second).state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(JobEngineTest, WatchReplaysFromASequenceThenFollowsLiveEvents) {
  executor_.SetHold(true);
  StartEngine();
  const std::string id = Submit(Spec(1, 1, 2, 1)).job_id();
  ASSERT_TRUE(WaitFor([&] { return executor_.held().size() == 2; }));
  auto live = std::make_shared<RecordingSink>();
  engine_->Watch(id, 2, live);
  ASSERT_TRUE(WaitFor([&] { return !live->events().empty(); }));
  executor_.held().ReleaseAll();
  ASSERT_TRUE(live->ended().WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_TRUE(live->end().ok());
  auto all = Events(id);
  auto got = live->events();
  ASSERT_EQ(got.size() + 1, all.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].sequence(), static_cast<int64_t>(i + 2));
  EXPECT_TRUE(got.back().has_state_changed());

  // A finished job replays from the sequence asked for, then ends.
  auto replay = std::make_shared<RecordingSink>();
  engine_->Watch(id, 5, replay);
  ASSERT_TRUE(replay->ended().WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_EQ(replay->events().size(), all.size() - 4);
  EXPECT_EQ(replay->events().front().sequence(), 5);

  auto missing = std::make_shared<RecordingSink>();
  engine_->Watch("job-none", 1, missing);
  ASSERT_TRUE(missing->ended().WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_TRUE(absl::IsNotFound(missing->end()));
}

TEST_F(JobEngineTest, IdempotencyKeyReturnsTheSameJob) {
  StartEngine();
  v1::SubmitJobRequest request;
  *request.mutable_spec() = Spec(1, 1, 1, 1);
  request.set_idempotency_key("retry-me");
  auto submit = [&] {
    return Await<v1::SubmitJobResponse>(
        [&](Callback<v1::SubmitJobResponse> done) { engine_->SubmitJob(request, std::move(done)); });
  };
  auto first = submit();
  auto second = submit();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(first->created());
  EXPECT_FALSE(second->created());
  EXPECT_EQ(first->job().job_id(), second->job().job_id());
}

TEST_F(JobEngineTest, InvalidSpecIsRefusedNamingTheField) {
  StartEngine();
  v1::SubmitJobRequest request;
  *request.mutable_spec() = Spec(1, 0, 1, 1);
  request.mutable_spec()->mutable_search()->set_beam_width(100);
  auto response = Await<v1::SubmitJobResponse>(
      [&](Callback<v1::SubmitJobResponse> done) { engine_->SubmitJob(request, std::move(done)); });
  EXPECT_TRUE(absl::IsInvalidArgument(response.status()));
  EXPECT_NE(response.status().message().find("spec.search.beam_width"), absl::string_view::npos);
}

TEST_F(JobEngineTest, JobsShareTheProfilerPoolRoundRobin) {
  auto one_slot = std::make_unique<FakeProfilerPool>(1);
  pool_ = std::move(one_slot);
  pool_->HoldAfter(0);
  StartEngine();
  v1::JobSpec a = Spec(1, 1, 4, 2);
  a.mutable_problem()->set_name("a");
  v1::JobSpec b = Spec(1, 1, 4, 2);
  b.mutable_problem()->set_name("b");
  const std::string ja = Submit(a).job_id();
  const std::string jb = Submit(b).job_id();
  // Release one profile at a time; once both jobs have their children queued they alternate.
  for (int released = 0; !Finished(Get(ja)) || !Finished(Get(jb)); ++released) {
    if (released == 2) {
      ASSERT_TRUE(WaitFor([&] { return executor_.calls() == 8; }));
    }
    ASSERT_TRUE(WaitFor([&] { return pool_->held().size() > 0 || (Finished(Get(ja)) && Finished(Get(jb))); }));
    pool_->held().ReleaseAll();
  }
  auto order = pool_->dispatch_order();
  ASSERT_EQ(order.size(), 18u);
  // After both baselines, the 16 children alternate a, b, a, b ...
  for (size_t i = 3; i < order.size(); ++i) EXPECT_NE(order[i], order[i - 1]) << "at " << i;
}

}  // namespace
}  // namespace accelopt::orchestrator

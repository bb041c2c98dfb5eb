// Outcomes users can trust: a job none of whose candidates of an iteration could be produced or judged for
// reasons outside the kernels ends FAILED with a reason naming the fault and the first error; a job that ran
// correctly but found nothing faster SUCCEEDED saying "no improvement". Agent retries become job events, and
// iteration summaries go through a durable outbox so no experience is lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libs/testing/scratch_dir.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/testing/engine_test_helpers.h"
#include "services/orchestrator/testing/fake_clients.h"

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
using ::testing::HasSubstr;
using testing::Spec;
using ::testing::StartsWith;
using testing::WaitFor;

class JobEngineOutcomeTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenStore(); }
  void OpenStore() {
    auto kv = storage::KvStore::Open(dir_, JobStoreFamilies());
    ASSERT_TRUE(kv.ok()) << kv.status();
    kv_ = *std::move(kv);
    store_ = std::make_unique<JobStore>(kv_.get());
  }
  // Destroys the engine without letting it write anything more, then reopens the store.
  void Crash() {
    engine_.reset();
    store_.reset();
    kv_.reset();
    OpenStore();
  }
  v1::Job WaitFinished(const std::string& id) {
    v1::Job job;
    EXPECT_TRUE(WaitFor([&] {
      job = Get(id);
      return Finished(job);
    })) << job.DebugString();
    return job;
  }
  size_t OutboxSize() {
    auto outbox = store_->LoadOutbox();
    EXPECT_TRUE(outbox.ok()) << outbox.status();
    return outbox.ok() ? outbox->size() : 0;
  }
  int EventsOf(const std::string& id, v1::JobEvent::KindCase kind) {
    int n = 0;
    EXPECT_TRUE(store_
                    ->ScanEvents(id, 1,
                                 [&](const v1::JobEvent& e) {
                                   n += e.kind_case() == kind ? 1 : 0;
                                   return true;
                                 })
                    .ok());
    return n;
  }
  void TearDown() override {
    engine_.reset();
    store_.reset();
    kv_.reset();
  }

  void StartEngine(JobEngine::Options options = {}) {
    options.tick = absl::Milliseconds(20);
    engine_ = std::make_unique<JobEngine>(options, store_.get(),
                                          JobEngine::Clients{&planner_, &executor_, &memory_, &pool_}, nullptr);
    EXPECT_TRUE(engine_->Start().ok());
  }
  std::string Submit(const v1::JobSpec& spec) {
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    auto submitted = Await<v1::SubmitJobResponse>(
        [&](Callback<v1::SubmitJobResponse> done) { engine_->SubmitJob(request, std::move(done)); });
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    return submitted.ok() ? submitted->job().job_id() : "";
  }
  v1::Job Get(const std::string& id) {
    auto got = Await<v1::Job>([&](Callback<v1::Job> done) { engine_->GetJob(id, std::move(done)); });
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : v1::Job();
  }
  // Runs `spec` to its end and returns the final job.
  v1::Job Run(const v1::JobSpec& spec) {
    StartEngine();
    const std::string id = Submit(spec);
    v1::Job job;
    EXPECT_TRUE(WaitFor([&] {
      job = Get(id);
      return Finished(job);
    })) << job.DebugString();
    return job;
  }
  std::vector<v1::AgentRetried> RetryEvents(const std::string& id) {
    std::vector<v1::AgentRetried> retries;
    EXPECT_TRUE(store_
                    ->ScanEvents(id, 1,
                                 [&](const v1::JobEvent& e) {
                                   if (e.has_agent_retried()) retries.push_back(e.agent_retried());
                                   return true;
                                 })
                    .ok());
    return retries;
  }

  // The final state-changed event's reason and message agree with the job.
  void ExpectFinalEventMatches(const v1::Job& job) {
    v1::JobEvent last;
    ASSERT_TRUE(store_
                    ->ScanEvents(job.job_id(), 1,
                                 [&](const v1::JobEvent& e) {
                                   last = e;
                                   return true;
                                 })
                    .ok());
    EXPECT_EQ(last.state_changed().state(), job.state());
    EXPECT_EQ(last.state_changed().stop_reason(), job.stop_reason());
    EXPECT_EQ(last.state_changed().message(), job.message());
  }

  accelopt::testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.Path("store");
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<JobStore> store_;
  FakePlanner planner_;
  FakeExecutor executor_;
  FakeMemory memory_;
  FakeProfilerPool pool_{4};
  std::unique_ptr<JobEngine> engine_;
};

TEST_F(JobEngineOutcomeTest, PlannerDownFailsTheJobAsAgentsUnavailableWithTheFirstError) {
  planner_.SetHandler([](const v1::PlanRequest&) -> absl::StatusOr<v1::PlanResponse> {
    return absl::UnavailableError("connection refused (retried 5 times for 60s)");
  });
  v1::Job job = Run(Spec(2, 2, 2, 2));
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_AGENTS_UNAVAILABLE);
  EXPECT_THAT(
      job.message(),
      StartsWith("iteration 1: 4 of its 4 candidates were lost to agent calls that failed after their retries"));
  EXPECT_THAT(job.message(), HasSubstr("planner call failed: connection refused"));
  EXPECT_EQ(job.candidates().at("NO_KERNEL"), 4);
  EXPECT_EQ(job.best_candidate_id(), kBaselineCandidateId);
  EXPECT_EQ(executor_.calls(), 0);
  EXPECT_TRUE(memory_.summarize_requests().empty());
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, ExecutorRefusingEveryCallFailsTheJobAsAgentsUnavailable) {
  executor_.SetHandler([](const v1::ImplementRequest&) -> absl::StatusOr<v1::ImplementResponse> {
    return absl::InvalidArgumentError("model.provider: unknown provider 'nope'");
  });
  v1::Job job = Run(Spec(1, 1, 2, 2));
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_AGENTS_UNAVAILABLE);
  EXPECT_THAT(job.message(), HasSubstr("executor call failed: model.provider: unknown provider 'nope'"));
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, AgentsAnsweringWithoutKernelsFailTheJobAsNoValidCandidate) {
  planner_.SetHandler([](const v1::PlanRequest& r) -> absl::StatusOr<v1::PlanResponse> {
    v1::PlanResponse response;
    for (int j = 0; j < r.num_plans(); ++j) {
      response.add_samples()->set_error("the API key variable OPENAI_API_KEY of endpoint vllm is not set");
    }
    return response;
  });
  v1::Job job = Run(Spec(1, 1, 2, 1));
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_NO_VALID_CANDIDATE);
  EXPECT_THAT(job.message(), HasSubstr("none of its 2 candidates was judged (2 without a kernel, 0 profiler"));
  EXPECT_THAT(job.message(), HasSubstr("OPENAI_API_KEY"));
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, EveryProfileAnInfraErrorFailsTheJobAsProfilersUnavailable) {
  executor_.SetHandler([](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    v1::ImplementResponse response;
    for (int i = 0; i < r.num_samples(); ++i) {
      response.add_samples()->mutable_kernel()->set_source(absl::StrCat("# verdict=INFRA_ERROR\n# ", r.seed(), i));
    }
    return response;
  });
  v1::Job job = Run(Spec(2, 1, 2, 2));
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_PROFILERS_UNAVAILABLE);
  EXPECT_THAT(job.message(), HasSubstr("4 profiler infrastructure errors"));
  EXPECT_EQ(job.iterations_done(), 0);
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, BaselineInfraErrorFailsTheJobAsProfilersUnavailable) {
  v1::JobSpec spec = Spec(1, 1, 1, 1);
  spec.mutable_baseline()->set_source("# verdict=INFRA_ERROR\n");
  v1::Job job = Run(spec);
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_PROFILERS_UNAVAILABLE);
  EXPECT_THAT(job.message(), StartsWith("the baseline kernel could not be profiled"));
  EXPECT_EQ(planner_.calls(), 0);
}

TEST_F(JobEngineOutcomeTest, ABudgetThatRunsOutBeforeTheBaselineIsProfiledFailsTheJob) {
  pool_.HoldAfter(0);  // no profiler ever answers (every worker gone): the baseline waits until the budget ends
  v1::JobSpec spec = Spec(2, 1, 1, 1);
  spec.mutable_budget()->set_max_wall_seconds(0.2);
  v1::Job job = Run(spec);
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_BUDGET_WALL_TIME);
  EXPECT_THAT(job.message(), StartsWith("the baseline kernel was not profiled before the budget ran out"));
  EXPECT_THAT(job.message(), ::testing::Not(HasSubstr("no improvement")));
  EXPECT_TRUE(job.best_candidate_id().empty());
  EXPECT_EQ(planner_.calls(), 0);
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, ALaterIterationWithNothingJudgedFailsTheJobButKeepsTheBest) {
  int calls = 0;
  executor_.SetHandler([&calls](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    if (++calls > 1) return absl::UnavailableError("executor gone");
    return FakeExecutor::DefaultHandler(r);
  });
  v1::Job job = Run(Spec(2, 1, 1, 2));
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_AGENTS_UNAVAILABLE);
  EXPECT_THAT(job.message(), StartsWith("iteration 2: "));
  EXPECT_EQ(job.iterations_done(), 1);
  EXPECT_EQ(job.candidates().at("OK") + job.candidates().at("NO_KERNEL"), 5);
}

TEST_F(JobEngineOutcomeTest, SomeJudgedCandidatesAmongModelFailuresLetTheJobSucceed) {
  int calls = 0;
  executor_.SetHandler([&calls](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    if (calls++ % 2 == 0) return FakeExecutor::DefaultHandler(r);
    v1::ImplementResponse response;  // the model answered without code: the kernel's failure, not the cluster's
    for (int i = 0; i < r.num_samples(); ++i) response.add_samples()->set_error("no code block in the answer");
    return response;
  });
  v1::Job job = Run(Spec(2, 1, 2, 1));
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_ITERATIONS_DONE);
  EXPECT_GT(job.candidates().at("NO_KERNEL"), 0);
}

TEST_F(JobEngineOutcomeTest, AnAgentCallThatFailsAfterItsRetriesFailsTheJobInsteadOfSucceedingWithLess) {
  int calls = 0;
  executor_.SetHandler([&calls](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    if (calls++ % 2 == 1) return absl::UnavailableError("executor restarting");
    return FakeExecutor::DefaultHandler(r);
  });
  v1::Job job = Run(Spec(2, 1, 2, 1));
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_AGENTS_UNAVAILABLE);
  EXPECT_THAT(job.message(), HasSubstr("lost to agent calls that failed after their retries"));
  EXPECT_THAT(job.message(), HasSubstr("executor restarting"));
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, NothingFasterSucceedsSayingNoImprovement) {
  executor_.SetHandler([](const v1::ImplementRequest& r) -> absl::StatusOr<v1::ImplementResponse> {
    v1::ImplementResponse response;
    const double parent = FakeLatency(r.kernel().source()).value();
    for (int i = 0; i < r.num_samples(); ++i) {
      response.add_samples()->mutable_kernel()->set_source(FakeKernel(parent * 2, absl::StrCat(r.seed(), i)));
    }
    return response;
  });
  v1::Job job = Run(Spec(2, 1, 2, 1));
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_ITERATIONS_DONE);
  EXPECT_THAT(job.message(), StartsWith("no improvement"));
  EXPECT_EQ(job.best_candidate_id(), kBaselineCandidateId);
  EXPECT_DOUBLE_EQ(job.best_speedup(), 1.0);
  ExpectFinalEventMatches(job);
}

TEST_F(JobEngineOutcomeTest, AnImprovementSucceedsWithoutTheNoImprovementMessage) {
  v1::Job job = Run(Spec(2, 2, 2, 2));
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_NE(job.best_candidate_id(), kBaselineCandidateId);
  EXPECT_THAT(job.message(), ::testing::Not(HasSubstr("no improvement")));
}

AgentRetryEvent Retry(const std::string& job_id, const std::string& agent, bool gave_up = false) {
  return {agent,
          agent == "planner" ? "Plan" : "Implement",
          absl::UnavailableError("connection refused"),
          1,
          absl::Milliseconds(100),
          job_id,
          gave_up};
}

TEST_F(JobEngineOutcomeTest, RetriesAreCoalescedJobEventsAndGiveUpsAlwaysShow) {
  planner_.SetHold(true);
  JobEngine::Options options;
  options.retry_event_interval = absl::Hours(1);
  StartEngine(options);
  const std::string id = Submit(Spec(1, 1, 1, 1));
  ASSERT_TRUE(WaitFor([&] { return planner_.held().size() == 1; }));
  auto listener = engine_->AgentRetryListener();
  for (int i = 0; i < 3; ++i) listener(Retry(id, "planner"));
  listener(Retry(id, "executor"));
  listener(Retry("job-unknown", "planner"));
  listener(Retry(id, "planner", /*gave_up=*/true));
  ASSERT_TRUE(WaitFor([&] { return RetryEvents(id).size() == 3; }));
  auto events = RetryEvents(id);
  EXPECT_EQ(events[0].agent(), "planner");
  EXPECT_EQ(events[0].retries(), 1);
  EXPECT_FALSE(events[0].gave_up());
  EXPECT_EQ(events[1].agent(), "executor");
  EXPECT_EQ(events[1].retries(), 1);
  // The two coalesced planner retries come with the give-up.
  EXPECT_EQ(events[2].agent(), "planner");
  EXPECT_EQ(events[2].retries(), 2);
  EXPECT_TRUE(events[2].gave_up());
  EXPECT_EQ(events[2].error(), "connection refused");
  EXPECT_EQ(Get(id).stats().agent_retries(), 4);
  planner_.held().ReleaseAll();
}

TEST_F(JobEngineOutcomeTest, CoalescedRetriesAreReportedOnceTheIntervalPasses) {
  planner_.SetHold(true);
  JobEngine::Options options;
  options.retry_event_interval = absl::Milliseconds(200);
  StartEngine(options);
  const std::string id = Submit(Spec(1, 1, 1, 1));
  ASSERT_TRUE(WaitFor([&] { return planner_.held().size() == 1; }));
  auto listener = engine_->AgentRetryListener();
  listener(Retry(id, "planner"));
  listener(Retry(id, "planner"));
  listener(Retry(id, "planner"));
  ASSERT_TRUE(WaitFor([&] { return RetryEvents(id).size() == 2; }));
  auto events = RetryEvents(id);
  EXPECT_EQ(events[0].retries() + events[1].retries(), 3);
  EXPECT_EQ(events[0].retries(), 1);
  planner_.held().ReleaseAll();
}

JobEngine::Options FastOutbox() {
  JobEngine::Options options;
  options.outbox_initial_backoff = absl::Milliseconds(10);
  options.outbox_max_backoff = absl::Milliseconds(40);
  return options;
}

TEST_F(JobEngineOutcomeTest, MemoryDownForAWhileThenUpStoresEveryIterationsExperiencesOnce) {
  memory_.set_fail_summarize(true);
  StartEngine(FastOutbox());
  const std::string id = Submit(Spec(2, 1, 2, 2));
  // The first iteration's summary is stored and retried while memory is down; the job waits.
  ASSERT_TRUE(WaitFor([&] { return memory_.summarize_requests().size() >= 5; }));
  EXPECT_EQ(OutboxSize(), 1u);
  EXPECT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING);
  const size_t failed_before = memory_.summarize_requests().size();
  memory_.set_fail_summarize(false);
  v1::Job job = WaitFinished(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.iterations_done(), 2);
  EXPECT_EQ(OutboxSize(), 0u);
  EXPECT_EQ(EventsOf(id, v1::JobEvent::kExperiencesPending), 0);
  // One acknowledged delivery per iteration (a failed one may be in flight at the switch), nothing twice.
  const auto requests = memory_.summarize_requests();
  EXPECT_LE(requests.size() - failed_before, 3u);
  EXPECT_GT(job.experiences_added(), 0);
  EXPECT_EQ(static_cast<size_t>(job.experiences_added()), memory_.experiences(id).size());
  EXPECT_EQ(EventsOf(id, v1::JobEvent::kExperienceAdded), job.experiences_added());
}

TEST_F(JobEngineOutcomeTest, APendingSummaryIsDeliveredAfterAnOrchestratorRestart) {
  memory_.set_fail_summarize(true);
  StartEngine(FastOutbox());
  const std::string id = Submit(Spec(1, 1, 2, 2));
  ASSERT_TRUE(WaitFor([&] { return memory_.summarize_requests().size() >= 2; }));
  Crash();
  EXPECT_EQ(OutboxSize(), 1u);
  memory_.set_fail_summarize(false);
  StartEngine(FastOutbox());
  v1::Job job = WaitFinished(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(OutboxSize(), 0u);
  EXPECT_GT(job.experiences_added(), 0);
  EXPECT_EQ(static_cast<size_t>(job.experiences_added()), memory_.experiences(id).size());
}

TEST_F(JobEngineOutcomeTest, MemoryDownPastTheWaitIsReportedAndDeliveryContinuesAfterTheJob) {
  memory_.set_fail_summarize(true);
  JobEngine::Options options = FastOutbox();
  options.summarize_wait = absl::Milliseconds(100);
  StartEngine(options);
  const std::string id = Submit(Spec(1, 1, 2, 2));
  v1::Job job = WaitFinished(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_THAT(job.message(), HasSubstr("iteration 1: experiences not stored yet, delivery continues"));
  EXPECT_EQ(EventsOf(id, v1::JobEvent::kExperiencesPending), 1);
  EXPECT_EQ(OutboxSize(), 1u);
  memory_.set_fail_summarize(false);
  ASSERT_TRUE(WaitFor([&] { return OutboxSize() == 0; }));
  EXPECT_FALSE(memory_.experiences(id).empty());
}

TEST_F(JobEngineOutcomeTest, RetryListenerOutlivesTheEngine) {
  StartEngine();
  auto listener = engine_->AgentRetryListener();
  engine_.reset();
  listener(Retry("job-1", "planner"));  // dropped, not a use after free
}

}  // namespace
}  // namespace accelopt::orchestrator

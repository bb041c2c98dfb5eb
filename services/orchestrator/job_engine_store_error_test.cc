// Sticky store errors: a write failure injected at each transition of a job (submit, start, baseline result,
// plan record, executor answer, candidate result, iteration end, summarize, job end) must fail the job naming
// the store error, and nothing in memory may go past what the store holds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "libs/storage/rocks_kv_store.h"
#include "libs/testing/fault_injecting_kv_store.h"
#include "libs/testing/scratch_dir.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/testing/engine_test_helpers.h"
#include "services/orchestrator/testing/fake_clients.h"

namespace accelopt::orchestrator {
namespace {

using google::protobuf::util::MessageDifferencer;
using testing::Await;
using testing::FakeExecutor;
using testing::FakeMemory;
using testing::FakePlanner;
using testing::FakeProfilerPool;
using testing::Finished;
using testing::Spec;
using testing::WaitFor;

constexpr char kInjected[] = "injected: no space left on device";

// Two iterations of one parent, one plan, one sample: every kind of transition, in a fixed order.
v1::JobSpec SmallSpec() { return Spec(2, 1, 1, 1); }

// What an event says, without ids and times (which differ between jobs).
std::string Describe(const v1::JobEvent& e) {
  return absl::StrCat(e.kind_case(), "/", e.state_changed().state(), "/", e.state_changed().stop_reason(), "/",
                      e.candidate_finished().verdict(), "/", e.iteration_started().iteration(), "/",
                      e.iteration_finished().iteration());
}

// The job record of `batch`, if it writes one.
std::optional<v1::JobRecord> RecordIn(const storage::WriteBatch& batch) {
  for (const auto& op : batch.ops()) {
    v1::JobRecord record;
    if (op.family == "jobs" && !op.is_delete && record.ParseFromString(op.value)) return record;
  }
  return std::nullopt;
}

int EventsIn(const storage::WriteBatch& batch) {
  int n = 0;
  for (const auto& op : batch.ops()) n += op.family == "events" ? 1 : 0;
  return n;
}

class JobEngineStoreErrorTest : public ::testing::Test {
 protected:
  void TearDown() override { Close(); }

  void Open(const std::string& name) {
    dir_ = scratch_.Path(name);
    Reopen();
  }
  void Reopen() {
    auto base = storage::RocksKvStore::Open(dir_, JobStoreFamilies());
    ASSERT_TRUE(base.ok()) << base.status();
    base_ = *std::move(base);
    faults_ = std::make_unique<accelopt::testing::FaultInjectingKvStore>(base_.get());
    store_ = std::make_unique<JobStore>(faults_.get());
  }
  void Close() {
    engine_.reset();
    store_.reset();
    faults_.reset();
    base_.reset();
  }
  void StartEngine() {
    JobEngine::Options options;
    options.tick = absl::Milliseconds(20);
    engine_ = std::make_unique<JobEngine>(options, store_.get(),
                                          JobEngine::Clients{&planner_, &executor_, &memory_, &pool_}, nullptr);
    ASSERT_TRUE(engine_->Start().ok());
  }
  // Stops the engine like a crash, then opens the same directory again (without faults).
  void Restart() {
    Close();
    Reopen();
  }

  absl::StatusOr<v1::SubmitJobResponse> Submit() {
    v1::SubmitJobRequest request;
    *request.mutable_spec() = SmallSpec();
    return Await<v1::SubmitJobResponse>(
        [&](Callback<v1::SubmitJobResponse> done) { engine_->SubmitJob(request, std::move(done)); });
  }
  v1::Job Get(const std::string& id) {
    auto job = Await<v1::Job>([&](Callback<v1::Job> done) { engine_->GetJob(id, std::move(done)); });
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : v1::Job();
  }
  v1::Job WaitFinished(const std::string& id) {
    v1::Job job;
    EXPECT_TRUE(WaitFor([&] {
      job = Get(id);
      return Finished(job);
    })) << job.DebugString();
    return job;
  }
  std::vector<v1::Candidate> Candidates(const std::string& id) {
    v1::ListCandidatesRequest request;
    request.set_job_id(id);
    auto response = Await<v1::ListCandidatesResponse>(
        [&](Callback<v1::ListCandidatesResponse> done) { engine_->ListCandidates(request, std::move(done)); });
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? std::vector<v1::Candidate>(response->candidates().begin(), response->candidates().end())
                         : std::vector<v1::Candidate>();
  }
  std::vector<std::string> StoredEvents(const std::string& id) {
    std::vector<std::string> events;
    EXPECT_TRUE(store_
                    ->ScanEvents(id, 1,
                                 [&](const v1::JobEvent& e) {
                                   events.push_back(Describe(e));
                                   return true;
                                 })
                    .ok());
    return events;
  }

  // Watches every write: the events stored up to each write, and the last job record that was stored.
  void Observe(std::optional<int> fail_from, bool fail_later_ones) {
    events_through_ = {0};
    last_committed_.reset();
    faults_->FailWritesMatching(
        [this, fail_from, fail_later_ones](int number, const storage::WriteBatch& batch) {
          const bool fail = fail_from.has_value() && (fail_later_ones ? number >= *fail_from : number == *fail_from);
          if (!fail) {
            events_through_.push_back(events_through_.back() + EventsIn(batch));
            if (auto record = RecordIn(batch); record.has_value()) last_committed_ = *record;
          }
          return fail;
        },
        absl::UnavailableError(kInjected));
  }

  // Runs the job once without faults: the number of writes and the events the job stores.
  void RunReference() {
    Open("reference");
    Observe(std::nullopt, false);
    StartEngine();
    auto submitted = Submit();
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    ASSERT_EQ(WaitFinished(submitted->job().job_id()).state(), v1::JOB_STATE_SUCCEEDED);
    reference_writes_ = faults_->writes();
    reference_events_through_ = events_through_;
    reference_events_ = StoredEvents(submitted->job().job_id());
    Close();
    std::filesystem::remove_all(dir_);
  }

  // The live job is FAILED naming the store error and holds no progress past the last committed record.
  void ExpectFailedAtLastCommit(const v1::Job& live, int n) {
    EXPECT_EQ(live.state(), v1::JOB_STATE_FAILED) << "write " << n;
    EXPECT_EQ(live.stop_reason(), v1::STOP_REASON_STORE_ERROR) << "write " << n;
    EXPECT_NE(live.message().find(kInjected), std::string::npos) << "write " << n << ": " << live.message();
    ASSERT_TRUE(last_committed_.has_value()) << "write " << n;
    const v1::Job& committed = last_committed_->job();
    EXPECT_EQ(live.iterations_done(), committed.iterations_done()) << "write " << n;
    EXPECT_EQ(live.best_candidate_id(), committed.best_candidate_id()) << "write " << n;
    EXPECT_EQ(live.stats().profiles_run(), committed.stats().profiles_run()) << "write " << n;
    EXPECT_TRUE(MessageDifferencer::Equals(live.usage(), committed.usage())) << "write " << n;
    EXPECT_EQ(live.experiences_added(), committed.experiences_added()) << "write " << n;
  }

  accelopt::testing::ScratchDir scratch_;
  std::string dir_;
  std::unique_ptr<storage::RocksKvStore> base_;
  std::unique_ptr<accelopt::testing::FaultInjectingKvStore> faults_;
  std::unique_ptr<JobStore> store_;
  FakePlanner planner_;
  FakeExecutor executor_;
  FakeMemory memory_;
  FakeProfilerPool pool_{4};
  std::unique_ptr<JobEngine> engine_;

  std::vector<int> events_through_;
  std::optional<v1::JobRecord> last_committed_;
  int reference_writes_ = 0;
  std::vector<int> reference_events_through_;
  std::vector<std::string> reference_events_;
};

TEST_F(JobEngineStoreErrorTest, AFailedSubmitCreatesNoJob) {
  Open("submit");
  faults_->FailNthWrite(1, absl::UnavailableError(kInjected));
  StartEngine();
  auto submitted = Submit();
  ASSERT_FALSE(submitted.ok());
  EXPECT_TRUE(absl::IsUnavailable(submitted.status()));
  EXPECT_NE(submitted.status().message().find(kInjected), std::string::npos) << submitted.status();
  Restart();
  auto jobs = store_->LoadJobs();
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->empty());
}

// The failure is recorded: the live job, the store and a restarted engine all show the same FAILED job,
// whose events are those committed before the failed write, then the cancellations and the failure.
TEST_F(JobEngineStoreErrorTest, AFailedWriteAtEachTransitionFailsTheJobAtItsLastCommit) {
  RunReference();
  ASSERT_GE(reference_writes_, 12);  // submit, start, baseline, 2 x (plan, implement, profile, end, summarize)
  for (int n = 2; n <= reference_writes_; ++n) {
    Open(absl::StrCat("at_", n));
    Observe(n, false);
    StartEngine();
    auto submitted = Submit();
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    const std::string id = submitted->job().job_id();
    const v1::Job live = WaitFinished(id);
    ExpectFailedAtLastCommit(live, n);
    const std::vector<v1::Candidate> live_candidates = Candidates(id);
    EXPECT_EQ(faults_->failed_writes(), std::vector<int>{n});

    Restart();
    StartEngine();
    const v1::Job restarted = Get(id);
    EXPECT_TRUE(MessageDifferencer::Equals(restarted, live)) << "write " << n << ":\n"
                                                             << restarted.DebugString() << "\nlive:\n"
                                                             << live.DebugString();
    const std::vector<v1::Candidate> stored_candidates = Candidates(id);
    ASSERT_EQ(stored_candidates.size(), live_candidates.size()) << "write " << n;
    for (size_t i = 0; i < stored_candidates.size(); ++i) {
      EXPECT_TRUE(MessageDifferencer::Equals(stored_candidates[i], live_candidates[i])) << "write " << n;
    }
    std::vector<std::string> events = StoredEvents(id);
    const size_t committed = reference_events_through_[n - 1];
    ASSERT_GT(events.size(), committed) << "write " << n;
    for (size_t i = 0; i < committed; ++i)
      EXPECT_EQ(events[i], reference_events_[i]) << "write " << n << " event " << i;
    v1::JobEvent cancelled;
    cancelled.mutable_candidate_finished()->set_verdict(v1::VERDICT_CANCELLED);
    for (size_t i = committed; i + 1 < events.size(); ++i) EXPECT_EQ(events[i], Describe(cancelled)) << "write " << n;
    v1::JobEvent failed;
    failed.mutable_state_changed()->set_state(v1::JOB_STATE_FAILED);
    failed.mutable_state_changed()->set_stop_reason(v1::STOP_REASON_STORE_ERROR);
    EXPECT_EQ(events.back(), Describe(failed)) << "write " << n;
    Close();
    std::filesystem::remove_all(dir_);
  }
}

// When the store refuses the failure too, the job is FAILED in memory only and the store (what a restart
// sees) holds exactly the last committed transition.
TEST_F(JobEngineStoreErrorTest, WhenEvenTheFailureCannotBeStoredTheStoreKeepsTheLastCommit) {
  RunReference();
  for (int n = 2; n <= reference_writes_; ++n) {
    Open(absl::StrCat("every_from_", n));
    Observe(n, true);
    StartEngine();
    auto submitted = Submit();
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    const std::string id = submitted->job().job_id();
    ExpectFailedAtLastCommit(WaitFinished(id), n);
    // The engine tried the failed transition and the record of the failure, nothing else.
    EXPECT_EQ(faults_->failed_writes(), (std::vector<int>{n, n + 1})) << "write " << n;

    Restart();
    auto stored = store_->LoadJob(id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_TRUE(MessageDifferencer::Equals(*stored, *last_committed_)) << "write " << n;
    EXPECT_NE(stored->job().state(), v1::JOB_STATE_FAILED) << "write " << n;
    const std::vector<std::string> events = StoredEvents(id);
    EXPECT_EQ(events, std::vector<std::string>(reference_events_.begin(),
                                               reference_events_.begin() + reference_events_through_[n - 1]))
        << "write " << n;
    Close();
    std::filesystem::remove_all(dir_);
  }
}

}  // namespace
}  // namespace accelopt::orchestrator

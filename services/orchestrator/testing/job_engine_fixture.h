// The job engine's test fixture: a JobEngine over a real RocksDB job store and fake agents and profilers
// (fake_clients.h), with helpers that submit, wait for and read back jobs, and check a finished job's numbers.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "libs/testing/scratch_dir.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/testing/engine_test_helpers.h"
#include "services/orchestrator/testing/fake_clients.h"

namespace accelopt::orchestrator::testing {

// Records the events a watcher receives.
class RecordingSink : public EventSink {
 public:
  void OnEvents(const std::vector<v1::JobEvent>& events) override {
    absl::MutexLock lock(&mu_);
    for (const auto& e : events) events_.push_back(e);
  }
  void OnEnd(const absl::Status& status) override {
    {
      absl::MutexLock lock(&mu_);
      end_ = status;
    }
    ended_.Notify();
  }
  std::vector<v1::JobEvent> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  absl::Status end() const {
    absl::MutexLock lock(&mu_);
    return end_;
  }
  absl::Notification& ended() { return ended_; }

 private:
  mutable absl::Mutex mu_;
  std::vector<v1::JobEvent> events_;
  absl::Status end_;
  absl::Notification ended_;
};

class JobEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenStore(); }
  void TearDown() override {
    engine_.reset();
    store_.reset();
    kv_.reset();
  }

  void OpenStore() {
    auto kv = storage::KvStore::Open(dir_, JobStoreFamilies());
    ASSERT_TRUE(kv.ok()) << kv.status();
    kv_ = *std::move(kv);
    store_ = std::make_unique<JobStore>(kv_.get());
  }

  void StartEngine(JobEngine::Options options = {}, OrchestratorMetrics* metrics = nullptr) {
    options.tick = absl::Milliseconds(20);
    engine_ = std::make_unique<JobEngine>(options, store_.get(),
                                          JobEngine::Clients{&planner_, &executor_, &memory_, pool_.get()}, metrics);
    ASSERT_TRUE(engine_->Start().ok());
  }

  // Destroys the engine without letting it write anything more, then reopens the store.
  void Crash() {
    engine_.reset();
    store_.reset();
    kv_.reset();
    OpenStore();
  }

  v1::Job Submit(const v1::JobSpec& spec, const std::string& key = "") {
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    request.set_idempotency_key(key);
    auto response = Await<v1::SubmitJobResponse>(
        [&](Callback<v1::SubmitJobResponse> done) { engine_->SubmitJob(request, std::move(done)); });
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->job() : v1::Job();
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

  std::vector<v1::JobEvent> Events(const std::string& id, int64_t from = 1) {
    std::vector<v1::JobEvent> events;
    EXPECT_TRUE(store_
                    ->ScanEvents(id, from,
                                 [&](const v1::JobEvent& e) {
                                   events.push_back(e);
                                   return true;
                                 })
                    .ok());
    return events;
  }

  // The numbers of a finished job agree with its candidates.
  void ExpectConsistent(const v1::Job& job, const std::vector<v1::Candidate>& candidates) {
    int64_t counted = 0;
    for (const auto& [verdict, n] : job.candidates()) counted += n;
    EXPECT_EQ(counted, static_cast<int64_t>(candidates.size()));
    int64_t profiled = 0;
    double best = 1e9;
    std::string best_id;
    for (const v1::Candidate& c : candidates) {
      EXPECT_EQ(c.state(), v1::CANDIDATE_STATE_DONE) << c.candidate_id();
      const v1::Verdict v = c.result().verdict();
      if (v != v1::VERDICT_NO_KERNEL && v != v1::VERDICT_DUPLICATE && v != v1::VERDICT_CANCELLED) ++profiled;
      if (v == v1::VERDICT_OK && c.result().latency().mean_ms() < best) {
        best = c.result().latency().mean_ms();
        best_id = c.candidate_id();
      }
    }
    EXPECT_EQ(job.stats().profiles_run(), profiled);
    EXPECT_EQ(job.best_candidate_id(), best_id);
    EXPECT_DOUBLE_EQ(job.best_latency_ms(), best);
    EXPECT_NEAR(job.best_speedup(), job.baseline_latency_ms() / best, 1e-9);
  }

  accelopt::testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.Path("store");
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<JobStore> store_;
  FakePlanner planner_;
  FakeExecutor executor_;
  FakeMemory memory_;
  std::unique_ptr<FakeProfilerPool> pool_ = std::make_unique<FakeProfilerPool>(4);
  std::unique_ptr<JobEngine> engine_;
};

}  // namespace accelopt::orchestrator::testing

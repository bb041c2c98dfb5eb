#include "services/orchestrator/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace accelopt::orchestrator {
namespace {

bool WaitFor(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

// A scripted worker: profiles are held until the test answers them; status and health answer at once.
class FakeWorker : public ProfilerWorker {
 public:
  struct Held : public CallHandle {
    std::mutex mu;
    Callback<v1::ProfileResult> done;
    std::string candidate_id;
    void Answer(absl::StatusOr<v1::ProfileResult> r) {
      Callback<v1::ProfileResult> fn;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!done) return;
        fn = std::move(done);
        done = nullptr;
      }
      std::move(fn)(std::move(r));
    }
    void Cancel() override { Answer(absl::CancelledError("cancelled")); }
  };

  explicit FakeWorker(int slots) : slots_(slots) {}

  std::shared_ptr<CallHandle> Profile(const v1::ProfileRequest& request, absl::Duration,
                                      Callback<v1::ProfileResult> done) override {
    auto held = std::make_shared<Held>();
    held->done = std::move(done);
    held->candidate_id = request.candidate_id();
    absl::MutexLock lock(&mu_);
    held_.push_back(held);
    return held;
  }
  std::shared_ptr<CallHandle> GetStatus(absl::Duration, Callback<v1::WorkerStatus> done) override {
    if (!up_) {
      std::move(done)(absl::UnavailableError("connection refused"));
    } else {
      v1::WorkerStatus status;
      status.set_slots(slots_);
      std::move(done)(status);
    }
    return std::make_shared<Held>();
  }
  std::shared_ptr<CallHandle> CheckHealth(absl::Duration, absl::AnyInvocable<void(absl::Status) &&> done) override {
    health_checks_.fetch_add(1);
    std::move(done)(up_ ? absl::OkStatus() : absl::UnavailableError("down"));
    return std::make_shared<Held>();
  }

  // Answers the oldest held profile; false when none is held.
  bool AnswerNext(absl::StatusOr<v1::ProfileResult> result) {
    std::shared_ptr<Held> held;
    {
      absl::MutexLock lock(&mu_);
      for (auto it = held_.begin(); it != held_.end(); ++it) {
        std::lock_guard<std::mutex> entry(it->get()->mu);
        if (it->get()->done) {
          held = *it;
          held_.erase(it);
          break;
        }
      }
    }
    if (held == nullptr) return false;
    held->Answer(std::move(result));
    return true;
  }
  int pending() {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (auto& h : held_) {
      std::lock_guard<std::mutex> entry(h->mu);
      n += h->done ? 1 : 0;
    }
    return n;
  }
  void set_up(bool up) { up_ = up; }
  int health_checks() const { return health_checks_.load(); }

 private:
  const int slots_;
  std::atomic<bool> up_{true};
  std::atomic<int> health_checks_{0};
  absl::Mutex mu_;
  std::vector<std::shared_ptr<Held>> held_;
};

v1::ProfileResult Ok(double ms) {
  v1::ProfileResult r;
  r.set_verdict(v1::VERDICT_OK);
  r.mutable_latency()->set_mean_ms(ms);
  return r;
}

// Collects outcomes by candidate id.
class Outcomes {
 public:
  absl::AnyInvocable<void(ProfileOutcome) &&> For(const std::string& id) {
    return [this, id](ProfileOutcome o) {
      absl::MutexLock lock(&mu_);
      outcomes_[id] = std::move(o);
    };
  }
  std::optional<ProfileOutcome> Get(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto it = outcomes_.find(id);
    if (it == outcomes_.end()) return std::nullopt;
    return it->second;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, ProfileOutcome> outcomes_;
};

class WorkerPoolTest : public ::testing::Test {
 protected:
  void Make(std::vector<std::pair<std::string, int>> workers, int max_attempts = 3) {
    for (auto& [address, slots] : workers) {
      fakes_[address] = new FakeWorker(slots);
      addresses_.push_back(address);
    }
    WorkerPoolOptions options;
    options.poll_interval = absl::Milliseconds(5);
    options.resolve_interval = absl::Milliseconds(5);
    options.max_attempts = max_attempts;
    pool_ = std::make_unique<WorkerPool>(
        options,
        [this]() -> absl::StatusOr<std::vector<std::string>> {
          absl::MutexLock lock(&mu_);
          return addresses_;
        },
        [this](const std::string& address) { return std::unique_ptr<ProfilerWorker>(fakes_.at(address)); }, nullptr);
    pool_->Start();
  }
  void SetAddresses(std::vector<std::string> a) {
    absl::MutexLock lock(&mu_);
    addresses_ = std::move(a);
  }
  std::shared_ptr<CallHandle> Profile(const std::string& id) {
    v1::ProfileRequest request;
    request.set_candidate_id(id);
    return pool_->Profile(request, absl::Seconds(10), outcomes_.For(id));
  }
  bool InRotation(const std::string& address) {
    for (const auto& w : pool_->Workers()) {
      if (w.address == address) return w.in_rotation;
    }
    return false;
  }

  absl::Mutex mu_;
  std::vector<std::string> addresses_;
  std::map<std::string, FakeWorker*> fakes_;  // owned by the pool once created
  Outcomes outcomes_;
  std::unique_ptr<WorkerPool> pool_;
};

TEST_F(WorkerPoolTest, DispatchesToFreeSlotsAsWorkersReportThem) {
  Make({{"w1:1", 1}, {"w2:1", 2}});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 3; }));
  Profile("a");
  Profile("b");
  Profile("c");
  EXPECT_EQ(fakes_["w1:1"]->pending(), 1);
  EXPECT_EQ(fakes_["w2:1"]->pending(), 2);
  EXPECT_EQ(pool_->FreeSlots(), 0);
  Profile("d");  // waits for a slot
  EXPECT_EQ(pool_->FreeSlots(), -1);
  // The first profile went to the worker with the most free slots (w2), the second to w1.
  ASSERT_TRUE(fakes_["w1:1"]->AnswerNext(Ok(1.0)));
  ASSERT_TRUE(WaitFor([&] { return fakes_["w1:1"]->pending() == 1; }));
  EXPECT_EQ(pool_->FreeSlots(), 0);
  auto a = outcomes_.Get("b");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->executions, 1);
  EXPECT_EQ(a->retries, 0);
  EXPECT_DOUBLE_EQ(a->result->latency().mean_ms(), 1.0);
}

TEST_F(WorkerPoolTest, AFailedWorkersProfileCompletesElsewhereAndTheWorkerLeavesRotation) {
  Make({{"w1:1", 1}, {"w2:1", 1}});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 2; }));
  Profile("a");
  FakeWorker* first = fakes_["w1:1"]->pending() == 1 ? fakes_["w1:1"] : fakes_["w2:1"];
  FakeWorker* second = first == fakes_["w1:1"] ? fakes_["w2:1"] : fakes_["w1:1"];
  const std::string first_address = first == fakes_["w1:1"] ? "w1:1" : "w2:1";
  first->set_up(false);
  ASSERT_TRUE(first->AnswerNext(absl::UnavailableError("worker killed")));
  ASSERT_TRUE(WaitFor([&] { return second->pending() == 1; }));
  EXPECT_FALSE(InRotation(first_address));
  ASSERT_TRUE(second->AnswerNext(Ok(2.0)));
  auto a = outcomes_.Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->result.ok());
  EXPECT_EQ(a->retries, 1);
  EXPECT_EQ(a->executions, 1);
  // Probed while down, back in rotation once healthy.
  ASSERT_TRUE(WaitFor([&] { return first->health_checks() > 1; }));
  EXPECT_FALSE(InRotation(first_address));
  first->set_up(true);
  ASSERT_TRUE(WaitFor([&] { return InRotation(first_address); }));
}

TEST_F(WorkerPoolTest, InfraErrorVerdictIsRetriedAndCountedAsAnExecution) {
  Make({{"w1:1", 1}, {"w2:1", 1}});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 2; }));
  Profile("a");
  FakeWorker* first = fakes_["w1:1"]->pending() == 1 ? fakes_["w1:1"] : fakes_["w2:1"];
  FakeWorker* second = first == fakes_["w1:1"] ? fakes_["w2:1"] : fakes_["w1:1"];
  v1::ProfileResult infra;
  infra.set_verdict(v1::VERDICT_INFRA_ERROR);
  ASSERT_TRUE(first->AnswerNext(infra));
  ASSERT_TRUE(WaitFor([&] { return second->pending() == 1; }));
  ASSERT_TRUE(second->AnswerNext(Ok(1.5)));
  auto a = outcomes_.Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->executions, 2);
  EXPECT_EQ(a->retries, 1);
  EXPECT_EQ(a->result->verdict(), v1::VERDICT_OK);
}

// A broken problem is the job's fault: its verdict is final, and the worker that reported it stays in rotation
// (a job must not be able to take workers out by handing them a bad reference).
TEST_F(WorkerPoolTest, AProblemErrorIsFinalAndLeavesTheWorkerInRotation) {
  Make({{"w1:1", 1}});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 1; }));
  Profile("a");
  v1::ProfileResult problem;
  problem.set_verdict(v1::VERDICT_PROBLEM_ERROR);
  ASSERT_TRUE(fakes_["w1:1"]->AnswerNext(problem));
  ASSERT_TRUE(WaitFor([&] { return outcomes_.Get("a").has_value(); }));
  auto a = outcomes_.Get("a");
  EXPECT_EQ(a->result->verdict(), v1::VERDICT_PROBLEM_ERROR);
  EXPECT_EQ(a->retries, 0);
  EXPECT_EQ(a->executions, 1);
  Profile("b");  // the same worker takes the next profile
  ASSERT_TRUE(WaitFor([&] { return fakes_["w1:1"]->pending() == 1; }));
  ASSERT_TRUE(fakes_["w1:1"]->AnswerNext(Ok(1.0)));
  ASSERT_TRUE(WaitFor([&] { return outcomes_.Get("b").has_value(); }));
  EXPECT_EQ(outcomes_.Get("b")->result->verdict(), v1::VERDICT_OK);
}

TEST_F(WorkerPoolTest, AttemptsAreBounded) {
  Make({{"w1:1", 1}, {"w2:1", 1}}, /*max_attempts=*/2);
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 2; }));
  Profile("a");
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(WaitFor([&] { return fakes_["w1:1"]->pending() + fakes_["w2:1"]->pending() == 1; }));
    FakeWorker* w = fakes_["w1:1"]->pending() == 1 ? fakes_["w1:1"] : fakes_["w2:1"];
    ASSERT_TRUE(w->AnswerNext(absl::DeadlineExceededError("deadline")));
  }
  ASSERT_TRUE(WaitFor([&] { return outcomes_.Get("a").has_value(); }));
  auto a = outcomes_.Get("a");
  EXPECT_TRUE(absl::IsDeadlineExceeded(a->result.status()));
  EXPECT_EQ(a->retries, 1);
  EXPECT_EQ(a->executions, 0);
}

TEST_F(WorkerPoolTest, ResolverAddsAndRemovesWorkers) {
  fakes_["w2:1"] = new FakeWorker(3);
  Make({{"w1:1", 1}});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 1; }));
  SetAddresses({"w2:1"});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 3 && pool_->Workers().size() == 1; }));
  EXPECT_EQ(pool_->Workers()[0].address, "w2:1");
}

TEST_F(WorkerPoolTest, CancelKillsARunningProfile) {
  Make({{"w1:1", 1}});
  ASSERT_TRUE(WaitFor([&] { return pool_->FreeSlots() == 1; }));
  auto running = Profile("a");
  auto waiting = Profile("b");
  waiting->Cancel();
  running->Cancel();
  ASSERT_TRUE(WaitFor([&] { return outcomes_.Get("a").has_value() && outcomes_.Get("b").has_value(); }));
  EXPECT_TRUE(absl::IsCancelled(outcomes_.Get("a")->result.status()));
  EXPECT_TRUE(absl::IsCancelled(outcomes_.Get("b")->result.status()));
  EXPECT_EQ(fakes_["w1:1"]->pending(), 0);
  EXPECT_EQ(pool_->FreeSlots(), 1);
}

}  // namespace
}  // namespace accelopt::orchestrator

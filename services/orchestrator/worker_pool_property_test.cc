// Seeded random interleavings of dispatches, results, RESOURCE_EXHAUSTED refusals, worker loss and
// recovery, resolver changes, cancellations and status polls, driven on one thread with a fake clock. After
// every poll round no candidate may wait while a worker has an idle slot, and the pool's count of busy slots
// must match the calls really in flight, and the pool's progress watchdog must not see a stall; at the end
// every candidate has finished exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/core/log.h"
#include "services/orchestrator/worker_pool.h"

namespace accelopt::orchestrator {
namespace {

constexpr absl::Duration kPollInterval = absl::Seconds(1);

// The truth about the workers the pool sees only through calls.
class Cluster {
 public:
  struct Worker {
    int slots = 1;
    int foreign = 0;  // slots another orchestrator uses
    bool up = true;
    bool resolved = true;
    int restarts = 0;
    int trouble_round = 0;  // the last round the worker went down, came back or failed a call
  };
  // A profile call not answered yet.
  struct Call : public CallHandle {
    Cluster* cluster = nullptr;
    std::string address;
    std::string candidate;
    bool accepted = false;  // running on the worker (not refused, not sent while it was down)
    int restarts = 0;       // the worker's restarts when the call arrived
    Callback<v1::ProfileResult> done;
    void Cancel() override { cluster->Answer(this, absl::CancelledError("cancelled")); }
  };
  // The handle of a call answered at once.
  struct Answered : public CallHandle {
    void Cancel() override {}
  };

  std::map<std::string, Worker> workers;
  std::vector<std::shared_ptr<Call>> calls;
  int rounds = 0;

  int Running(const std::string& address) const {
    int n = 0;
    for (const auto& c : calls) n += c->address == address && c->accepted ? 1 : 0;
    return n;
  }
  int InFlight(const std::string& address) const {
    return static_cast<int>(std::count_if(calls.begin(), calls.end(), [&](auto& c) { return c->address == address; }));
  }
  bool HasCall(const std::string& candidate) const {
    return std::any_of(calls.begin(), calls.end(), [&](auto& c) { return c->candidate == candidate; });
  }

  std::shared_ptr<CallHandle> Profile(const std::string& address, const v1::ProfileRequest& request,
                                      Callback<v1::ProfileResult> done) {
    EXPECT_FALSE(HasCall(request.candidate_id())) << request.candidate_id() << " dispatched twice at once";
    Worker& w = workers.at(address);
    auto call = std::make_shared<Call>();
    call->cluster = this;
    call->address = address;
    call->candidate = request.candidate_id();
    call->accepted = w.up && Running(address) + w.foreign < w.slots;
    call->restarts = w.restarts;
    call->done = std::move(done);
    calls.push_back(call);
    return call;
  }

  // Answers `call` as the worker would now (or with `forced` when set).
  void Answer(Call* call, std::optional<absl::Status> forced = std::nullopt) {
    auto it = std::find_if(calls.begin(), calls.end(), [&](auto& c) { return c.get() == call; });
    if (it == calls.end()) return;
    std::shared_ptr<Call> keep = *it;
    calls.erase(it);
    Worker& w = workers.at(call->address);
    absl::StatusOr<v1::ProfileResult> result;
    if (forced.has_value()) {
      result = *forced;
    } else if (!w.up || call->restarts != w.restarts) {
      result = absl::UnavailableError("connection reset");
      w.trouble_round = rounds;
    } else if (!call->accepted) {
      result = absl::ResourceExhaustedError("worker is full");
    } else {
      v1::ProfileResult ok;
      ok.set_verdict(v1::VERDICT_OK);
      result = ok;
    }
    std::move(call->done)(std::move(result));
  }

  void SetUp(const std::string& address, bool up) {
    Worker& w = workers.at(address);
    if (w.up == up) return;
    w.up = up;
    w.trouble_round = rounds;
    if (up) return;
    // A killed worker drops its connections: every call on it fails at once.
    ++w.restarts;
    std::vector<Call*> on_worker;
    for (auto& c : calls) {
      if (c->address == address) on_worker.push_back(c.get());
    }
    for (Call* c : on_worker) Answer(c);
  }
};

class SimulatedWorker : public ProfilerWorker {
 public:
  SimulatedWorker(Cluster* cluster, std::string address) : cluster_(cluster), address_(std::move(address)) {}
  std::shared_ptr<CallHandle> Profile(const v1::ProfileRequest& request, absl::Duration,
                                      Callback<v1::ProfileResult> done) override {
    return cluster_->Profile(address_, request, std::move(done));
  }
  std::shared_ptr<CallHandle> GetStatus(absl::Duration, Callback<v1::WorkerStatus> done) override {
    const Cluster::Worker& w = cluster_->workers.at(address_);
    if (!w.up) {
      std::move(done)(absl::UnavailableError("connection refused"));
    } else {
      v1::WorkerStatus status;
      status.set_slots(w.slots);
      status.set_busy_slots(std::min(w.slots, cluster_->Running(address_) + w.foreign));
      std::move(done)(status);
    }
    return std::make_shared<Cluster::Answered>();
  }
  std::shared_ptr<CallHandle> CheckHealth(absl::Duration, absl::AnyInvocable<void(absl::Status) &&> done) override {
    std::move(done)(cluster_->workers.at(address_).up ? absl::OkStatus() : absl::UnavailableError("down"));
    return std::make_shared<Cluster::Answered>();
  }

 private:
  Cluster* cluster_;
  std::string address_;
};

class Simulation {
 public:
  explicit Simulation(uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 3; ++i) cluster_.workers[absl::StrCat("w", i, ":1")].slots = 1 + Pick(3);
    WorkerPoolOptions options;
    options.poll_interval = kPollInterval;
    options.resolve_interval = kPollInterval;
    options.max_attempts = 3;
    options.now = [this] { return now_; };
    options.watchdog = &watchdog_;
    pool_ = std::make_unique<WorkerPool>(
        options,
        [this]() -> absl::StatusOr<std::vector<std::string>> {
          std::vector<std::string> addresses;
          for (auto& [address, w] : cluster_.workers) {
            if (w.resolved) addresses.push_back(address);
          }
          return addresses;
        },
        [this](const std::string& address) { return std::make_unique<SimulatedWorker>(&cluster_, address); }, nullptr);
    Round();
  }

  void Step() {
    const int event = Pick(100);
    if (event < 30) {
      Submit();
    } else if (event < 60) {
      if (!cluster_.calls.empty()) cluster_.Answer(cluster_.calls[Pick(cluster_.calls.size())].get());
    } else if (event < 72) {
      Round();
    } else if (event < 78) {
      Cluster::Worker& w = RandomWorker();
      w.foreign = Pick(w.slots + 1);
    } else if (event < 84) {
      auto it = std::next(cluster_.workers.begin(), Pick(cluster_.workers.size()));
      cluster_.SetUp(it->first, !it->second.up);
    } else if (event < 88) {
      Cluster::Worker& w = RandomWorker();
      w.resolved = !w.resolved;
      w.trouble_round = cluster_.rounds;
    } else if (event < 94) {
      CancelOne();
    } else {
      now_ += absl::Milliseconds(Pick(800));
    }
  }

  // Brings the cluster back to health and answers everything until every candidate has finished.
  void Drain() {
    for (auto& [address, w] : cluster_.workers) {
      w.foreign = 0;
      w.resolved = true;
      cluster_.SetUp(address, true);
    }
    for (int i = 0; i < 200 && finished_.size() < handles_.size(); ++i) {
      while (!cluster_.calls.empty()) cluster_.Answer(cluster_.calls.front().get());
      Round();
    }
  }

  // Every candidate submitted finished exactly once.
  void ExpectAllFinishedOnce() const {
    EXPECT_EQ(finished_.size(), handles_.size());
    for (const auto& [candidate, times] : finished_) EXPECT_EQ(times, 1) << candidate;
    EXPECT_TRUE(cluster_.calls.empty());
    EXPECT_EQ(pool_->FreeSlots() >= 0, true);
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  Cluster::Worker& RandomWorker() { return std::next(cluster_.workers.begin(), Pick(cluster_.workers.size()))->second; }

  void Submit() {
    const std::string candidate = absl::StrCat("c", handles_.size());
    v1::ProfileRequest request;
    request.set_candidate_id(candidate);
    handles_[candidate] =
        pool_->Profile(request, absl::Seconds(60), [this, candidate](ProfileOutcome) { ++finished_[candidate]; });
  }

  void CancelOne() {
    if (handles_.empty()) return;
    auto it = std::next(handles_.begin(), Pick(handles_.size()));
    it->second->Cancel();
  }

  void Round() {
    now_ += kPollInterval;
    pool_->RunRound();
    ++cluster_.rounds;
    CheckNoIdleSlotWhileWaiting();
    // A stall is allowed only while no worker is in rotation (work waits with nothing to take it, which the
    // watchdog reports); with a worker in rotation the pool never wedges.
    EXPECT_TRUE(watchdog_.Check().ok() || NoWorkerInRotation()) << watchdog_.Check() << " at round " << cluster_.rounds;
  }

  bool NoWorkerInRotation() const {
    for (const auto& view : pool_->Workers()) {
      if (view.in_rotation) return false;
    }
    return true;
  }

  void CheckNoIdleSlotWhileWaiting() {
    int waiting = 0;
    for (const auto& [candidate, handle] : handles_) {
      if (finished_.count(candidate) == 0 && !cluster_.HasCall(candidate)) ++waiting;
    }
    for (const auto& view : pool_->Workers()) {
      EXPECT_EQ(view.busy, cluster_.InFlight(view.address)) << view.address << " at round " << cluster_.rounds;
    }
    if (waiting == 0) return;
    for (const auto& [address, w] : cluster_.workers) {
      const bool settled = cluster_.rounds - w.trouble_round >= 2;
      const bool idle_slot = w.slots - w.foreign - cluster_.InFlight(address) > 0;
      EXPECT_FALSE(w.up && w.resolved && settled && idle_slot)
          << waiting << " candidates wait while " << address << " has an idle slot at round " << cluster_.rounds;
    }
  }

  std::mt19937 rng_;
  absl::Time now_ = absl::UnixEpoch();
  ProgressWatchdog watchdog_{absl::Seconds(30), [this] { return now_; }};
  Cluster cluster_;
  std::map<std::string, std::shared_ptr<CallHandle>> handles_;
  std::map<std::string, int> finished_;
  std::unique_ptr<WorkerPool> pool_;
};

TEST(WorkerPoolPauseTest, AWorkerFullWithAnotherOrchestratorsWorkIsRetriedAfterABoundedBackoff) {
  Cluster cluster;
  cluster.workers["w:1"].slots = 1;
  cluster.workers["w:1"].foreign = 1;  // another orchestrator holds the only slot
  absl::Time now = absl::UnixEpoch();
  WorkerPoolOptions options;
  options.poll_interval = kPollInterval;
  options.full_backoff_initial = absl::Seconds(2);
  options.full_backoff_max = absl::Seconds(3);
  options.now = [&now] { return now; };
  WorkerPool pool(
      options, []() -> absl::StatusOr<std::vector<std::string>> { return std::vector<std::string>{"w:1"}; },
      [&cluster](const std::string& address) { return std::make_unique<SimulatedWorker>(&cluster, address); }, nullptr);
  pool.RunRound();
  std::optional<ProfileOutcome> outcome;
  v1::ProfileRequest request;
  request.set_candidate_id("a");
  auto handle = pool.Profile(request, absl::Seconds(60), [&outcome](ProfileOutcome o) { outcome = std::move(o); });
  auto refuse_next = [&] {
    ASSERT_EQ(cluster.calls.size(), 1u);
    cluster.Answer(cluster.calls[0].get());
    ASSERT_TRUE(cluster.calls.empty()) << "a refusing worker must pause";
    ASSERT_TRUE(pool.Workers()[0].full);
  };
  refuse_next();
  // Polls still show the worker full: paused for the 2 s backoff, then tried again.
  now += absl::Seconds(1);
  pool.RunRound();
  EXPECT_TRUE(cluster.calls.empty());
  now += absl::Seconds(1);
  pool.RunRound();
  refuse_next();
  // The backoff doubles but stays within its 3 s bound.
  now += absl::Seconds(2);
  pool.RunRound();
  EXPECT_TRUE(cluster.calls.empty());
  now += absl::Seconds(1);
  pool.RunRound();
  refuse_next();
  // The other orchestrator's profile finished: the next poll shows the slot free and the pool uses it at once.
  cluster.workers["w:1"].foreign = 0;
  now += absl::Seconds(1);
  pool.RunRound();
  ASSERT_EQ(cluster.calls.size(), 1u);
  EXPECT_FALSE(pool.Workers()[0].full);
  cluster.Answer(cluster.calls[0].get());
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(outcome->result.ok()) << outcome->result.status();
  EXPECT_EQ(outcome->retries, 0);  // refusals are not failures
}

TEST(WorkerPoolPropertyTest, NeverWedgesLosesOrDuplicatesACandidate) {
  const core::LogLevel level = core::GetLogLevel();
  core::SetLogLevel(core::LogLevel::kError);  // workers fail thousands of times on purpose
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Simulation sim(seed);
    for (int step = 0; step < 400; ++step) sim.Step();
    sim.Drain();
    sim.ExpectAllFinishedOnce();
    if (::testing::Test::HasFailure()) break;
  }
  core::SetLogLevel(level);
}

}  // namespace
}  // namespace accelopt::orchestrator

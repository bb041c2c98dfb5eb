// The chaos suite: the whole cluster as real processes with real RocksDB stores on a small filesystem, and
// a seeded job (builtin optimizer, deterministic) run unfaulted and then under each fault: kill -9 of every
// service at random points, SIGSTOP/SIGCONT, a full disk that is freed again, connections dropped by a
// FaultProxy in front of each agent service, and a corrupt table file. Each faulted run is compared with the
// unfaulted one; the table of faults injected, survived and lost is printed at the end (docs/reliability.md).
//
// ctest runs the short case only; `make chaos` sets ACCELOPT_CHAOS=1 to run them all.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/storage/disk_space.h"
#include "libs/testing/fault_proxy.h"
#include "libs/testing/scratch_dir.h"
#include "tests/chaos/chaos_support.h"

namespace accelopt::chaos {
namespace {

using namespace std::chrono_literals;

constexpr auto kJobTimeout = 600s;
const char* const kAgents[] = {"planner", "executor", "memory"};
constexpr int kAgentTimeoutSeconds = 20;

bool FullSuite() {
  const char* v = std::getenv("ACCELOPT_CHAOS");
  return v != nullptr && std::string(v) == "1";
}

// A cluster whose orchestrator and memory stores live on a 32 MiB tmpfs (when it can be mounted) and whose
// orchestrator reaches each agent service through a FaultProxy.
class ChaosCluster {
 public:
  static std::unique_ptr<ChaosCluster> Start(const std::string& name) {
    std::unique_ptr<ChaosCluster> c(new ChaosCluster());
    c->scratch_ = std::make_unique<testing::ScratchDir>(absl::StrCat("chaos_disk_", name));
    c->disk_ = c->scratch_->path();
    c->mounted_ = mount("tmpfs", c->disk_.c_str(), "tmpfs", 0, "size=32m") == 0;
    e2e::ClusterOptions options;
    options.llm_script = "{\"rules\": []}";
    options.data_root = c->disk_ + "/data";
    // Short agent deadlines, so a pause can outlast them (PauseEachAgentServicePastTheDeadlines).
    options.agent_timeout_seconds = kAgentTimeoutSeconds;
    ChaosCluster* raw = c.get();
    options.route = [raw](const std::string& process, const std::string& address) {
      auto proxy = testing::FaultProxy::Start(address, /*seed=*/std::hash<std::string>()(process));
      if (!proxy.ok()) return address;
      std::string proxied = (*proxy)->address();
      raw->proxies_[process] = *std::move(proxy);
      return proxied;
    };
    auto cluster = e2e::E2eCluster::Start("chaos_" + name, options);
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    if (!cluster.ok()) return nullptr;
    c->cluster_ = *std::move(cluster);
    return c;
  }
  ~ChaosCluster() {
    cluster_.reset();
    proxies_.clear();
    if (mounted_) umount2(disk_.c_str(), MNT_DETACH);
  }

  e2e::E2eCluster& c() { return *cluster_; }
  bool mounted() const { return mounted_; }
  testing::FaultProxy& proxy(const std::string& process) { return *proxies_.at(process); }
  // Takes all but `leave` bytes of the disk; Free() gives them back.
  void FillLeaving(uint64_t leave) {
    uint64_t free = *storage::FreeBytes(disk_);
    int fd = open((disk_ + "/filler").c_str(), O_CREAT | O_WRONLY, 0600);
    if (free > leave) (void)posix_fallocate(fd, 0, static_cast<off_t>(free - leave));
    close(fd);
  }
  void Free() { std::filesystem::remove(disk_ + "/filler"); }
  std::string orchestrator_store() const { return disk_ + "/data/orchestrator"; }

 private:
  ChaosCluster() = default;
  std::unique_ptr<testing::ScratchDir> scratch_;
  std::string disk_;
  bool mounted_ = false;
  std::map<std::string, std::unique_ptr<testing::FaultProxy>> proxies_;
  std::unique_ptr<e2e::E2eCluster> cluster_;
};

// Runs the seeded job while `faults` runs beside it (returning how many faults it injected), compares with
// `reference` and records the row.
void FaultedRun(ChaosCluster& cc, const Outcome& reference, const std::string& fault,
                const std::function<int()>& faults) {
  int injected = 0;
  std::thread injector([&] { injected = faults(); });
  auto outcome = RunJob(cc.c(), RopeSpec(2), kJobTimeout);
  injector.join();
  FaultRow row{fault, injected, "identical"};
  if (!outcome.ok()) {
    row.result = absl::StrCat("lost: ", outcome.status().message());
  } else if (outcome->state == v1::JOB_STATE_FAILED && outcome->stop_reason != v1::STOP_REASON_UNSPECIFIED) {
    row.result = absl::StrCat("failed: ", v1::StopReason_Name(outcome->stop_reason), " ", outcome->message);
  } else if (auto lost = Differences(reference, *outcome); !lost.empty()) {
    row.result = absl::StrCat("lost: ", absl::StrJoin(lost, "; "));
  }
  EXPECT_EQ(row.result.rfind("lost:", 0), std::string::npos) << fault << ": " << row.result;
  for (const char* p : {"planner", "executor", "memory", "orchestrator"}) {
    EXPECT_TRUE(cc.c().Running(p)) << p << " is not running after " << fault << "\n" << cc.c().LogTail(p);
  }
  Record(row);
}

class TablePrinter : public ::testing::Environment {
 public:
  void TearDown() override { std::cout << "\nChaos: faults injected, survived and lost\n" << Table() << std::flush; }
};
const auto* const kPrinter = ::testing::AddGlobalTestEnvironment(new TablePrinter());

// The short case (in `make test`): a full disk under the orchestrator and memory refuses submits with
// RESOURCE_EXHAUSTED and turns readiness NOT_SERVING, nobody aborts, and everything resumes once space
// frees; a submit acknowledged after that survives kill -9.
TEST(ChaosTest, ShortDiskFullIsRefusedSurvivedAndHealed) {
  auto cc = ChaosCluster::Start("short_disk");
  ASSERT_NE(cc, nullptr);
  if (!cc->mounted()) GTEST_SKIP() << "cannot mount a tmpfs here";
  e2e::E2eCluster& c = cc->c();
  const std::string orchestrator = c.orchestrator_address();
  cc->FillLeaving(1 << 20);
  EXPECT_TRUE(WaitForHealth(orchestrator, "NOT_SERVING", 20s)) << Health(orchestrator);
  EXPECT_TRUE(WaitForHealth(c.address("memory"), "NOT_SERVING", 20s)) << Health(c.address("memory"));
  {
    grpc::ClientContext context;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = RopeSpec(1);
    v1::SubmitJobResponse response;
    grpc::Status s = c.jobs().SubmitJob(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("disk full"), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(c.Running("orchestrator")) << c.LogTail("orchestrator");
  EXPECT_TRUE(c.Running("memory")) << c.LogTail("memory");

  cc->Free();
  EXPECT_TRUE(WaitForHealth(orchestrator, "SERVING", 20s)) << Health(orchestrator);
  EXPECT_TRUE(WaitForHealth(c.address("memory"), "SERVING", 20s)) << Health(c.address("memory"));
  grpc::ClientContext context;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = RopeSpec(1);
  v1::SubmitJobResponse response;
  grpc::Status s = c.jobs().SubmitJob(&context, request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(c.Kill("orchestrator").ok());
  ASSERT_TRUE(c.Restart("orchestrator").ok()) << c.LogTail("orchestrator");
  grpc::ClientContext get_context;
  v1::GetJobRequest get;
  get.set_job_id(response.job().job_id());
  v1::Job job;
  grpc::Status got = c.jobs().GetJob(&get_context, get, &job);
  EXPECT_TRUE(got.ok()) << "the acknowledged submit was lost: " << got.error_message();
  Record({"disk full, then freed (no job running)", 1, got.ok() ? "identical" : "lost: acknowledged submit"});
}

class ChaosSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!FullSuite()) return;
    cluster_ = ChaosCluster::Start("suite").release();
    if (cluster_ == nullptr) return;
    auto ref = RunJob(cluster_->c(), RopeSpec(2), kJobTimeout);
    EXPECT_TRUE(ref.ok()) << ref.status();
    if (ref.ok()) reference_ = new Outcome(*ref);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (!FullSuite()) GTEST_SKIP() << "set ACCELOPT_CHAOS=1 (make chaos) to run the full chaos suite";
    ASSERT_NE(cluster_, nullptr);
    ASSERT_NE(reference_, nullptr);
  }
  static inline ChaosCluster* cluster_ = nullptr;
  static inline Outcome* reference_ = nullptr;
};

// Kills `process` `times` times at seeded random points, restarting it each time.
std::function<int()> KillRepeatedly(e2e::E2eCluster& c, const std::string& process, int times, uint64_t seed) {
  return [&c, process, times, seed] {
    std::mt19937_64 random(seed);
    int injected = 0;
    for (int i = 0; i < times; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500 + random() % 3000));
      if (!c.Kill(process).ok()) continue;
      ++injected;
      std::this_thread::sleep_for(300ms);
      EXPECT_TRUE(c.Restart(process).ok()) << process << ": " << c.LogTail(process);
    }
    return injected;
  };
}

TEST_F(ChaosSuite, KillNineEachServiceAtRandomPoints) {
  for (const char* p : {"planner", "executor", "memory", "orchestrator", "profiler-0"}) {
    FaultedRun(*cluster_, *reference_, absl::StrCat("kill -9 ", p, " x3"), KillRepeatedly(cluster_->c(), p, 3, 17));
  }
}

TEST_F(ChaosSuite, PauseEachAgentServiceThenResumeIt) {
  for (const char* p : kAgents) {
    FaultedRun(*cluster_, *reference_, absl::StrCat("SIGSTOP ", p, " 5 s, SIGCONT"), [p] {
      std::this_thread::sleep_for(1500ms);
      if (!cluster_->c().Signal(p, SIGSTOP).ok()) return 0;
      std::this_thread::sleep_for(5s);
      (void)cluster_->c().Signal(p, SIGCONT);
      return 1;
    });
  }
}

// Past every deadline: calls in flight time out and their retries (bounded by the call's deadline) find the
// service still stopped. The job must end as unfaulted or FAILED naming the agents, never "succeed" with less.
TEST_F(ChaosSuite, PauseEachAgentServicePastTheDeadlines) {
  for (const char* p : kAgents) {
    const auto pause = std::chrono::seconds(kAgentTimeoutSeconds + 10);
    FaultedRun(*cluster_, *reference_,
               absl::StrCat("SIGSTOP ", p, " ", pause.count(), " s (deadline ", kAgentTimeoutSeconds, " s), SIGCONT"),
               [p, pause] {
                 std::this_thread::sleep_for(1500ms);
                 if (!cluster_->c().Signal(p, SIGSTOP).ok()) return 0;
                 std::this_thread::sleep_for(pause);
                 (void)cluster_->c().Signal(p, SIGCONT);
                 return 1;
               });
  }
}

TEST_F(ChaosSuite, DropConnectionsToEachAgentService) {
  for (const char* p : kAgents) {
    FaultedRun(*cluster_, *reference_, absl::StrCat("drop 30% of connections to ", p, ", cut open ones"), [p] {
      testing::FaultProxy& proxy = cluster_->proxy(p);
      proxy.SetDropFraction(0.3);
      int cuts = 0;
      for (int i = 0; i < 4; ++i, ++cuts) {
        std::this_thread::sleep_for(1500ms);
        proxy.CutOpenConnections();
      }
      proxy.SetDropFraction(0);
      return cuts + static_cast<int>(proxy.dropped());
    });
  }
}

TEST_F(ChaosSuite, FillTheDiskMidJobThenFreeIt) {
  if (!cluster_->mounted()) GTEST_SKIP() << "cannot mount a tmpfs here";
  bool went_not_serving = false;
  FaultedRun(*cluster_, *reference_, "disk full mid-job for 3 s, then freed", [&] {
    std::this_thread::sleep_for(2s);
    cluster_->FillLeaving(1 << 20);
    went_not_serving = WaitForHealth(cluster_->c().orchestrator_address(), "NOT_SERVING", 5s);
    std::this_thread::sleep_for(3s);
    cluster_->Free();
    return 1;
  });
  EXPECT_TRUE(went_not_serving);
  EXPECT_TRUE(WaitForHealth(cluster_->c().orchestrator_address(), "SERVING", 20s));
}

// Last: it leaves the orchestrator's store corrupt.
TEST_F(ChaosSuite, ACorruptStoreIsReportedNeverServedOrAborted) {
  e2e::E2eCluster& c = cluster_->c();
  ASSERT_TRUE(c.Kill("orchestrator").ok());
  int corrupted = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cluster_->orchestrator_store())) {
    if (entry.path().extension() != ".sst") continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    f.write("corruptcorruptcorrupt", 21);
    ++corrupted;
  }
  absl::Status restarted = c.Restart("orchestrator");
  std::string result;
  if (corrupted == 0) {
    result = "lost: no table file to corrupt";
  } else if (!restarted.ok()) {
    // It refused to start on corrupt data: an exit with the reason, not an abort.
    const std::string log = c.LogTail("orchestrator");
    result = log.find("orrupt") != std::string::npos ? "failed: refused to start, store corrupt"
                                                     : absl::StrCat("lost: did not start: ", log);
  } else {
    result = WaitForHealth(c.orchestrator_address(), "NOT_SERVING", 30s) ? "failed: NOT_SERVING, store corrupt"
                                                                         : "lost: still SERVING on a corrupt store";
  }
  EXPECT_EQ(result.rfind("lost:", 0), std::string::npos) << result;
  Record({"corrupt table files of the orchestrator's store", corrupted, result});
}

}  // namespace
}  // namespace accelopt::chaos

// Tests of the real accelopt-memory binary: crash safety under SIGKILL while it writes, and the
// `accelopt memory` CLI against it.
#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "accelopt/v1/memory_service.grpc.pb.h"
#include "libs/core/file.h"
#include "libs/testing/child_process.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/experience_store.h"
#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::Request;
using ::accelopt::memory::testing::Sample;
using ::testing::HasSubstr;

const std::string kMemoryBinary = ACCELOPT_BINARY_DIR "/bin/accelopt-memory";
const std::string kCliBinary = ACCELOPT_BINARY_DIR "/bin/accelopt";
constexpr auto kStartTimeout = std::chrono::seconds(30);

// accelopt-memory on a free port, storing in `data_dir`, with the test-only "fake" summarizer.
struct MemoryProcess {
  std::string address;
  std::unique_ptr<accelopt::testing::ChildProcess> process;

  static MemoryProcess Start(const std::string& dir, const std::string& data_dir, const std::string& log_name) {
    std::string config = absl::StrCat(dir, "/memory.yaml");
    std::ofstream(config) << "server: {drain_seconds: 1}\n"
                          << "data_dir: " << data_dir << "\n"
                          << "enable_fake_summarizer: true\n";
    int port = accelopt::testing::PickFreePort();
    auto p = accelopt::testing::ChildProcess::Start({kMemoryBinary, "--config", config, "--port", std::to_string(port),
                                                     "--admin_port", std::to_string(accelopt::testing::PickFreePort())},
                                                    absl::StrCat(dir, "/", log_name));
    EXPECT_TRUE(p.ok()) << p.status();
    MemoryProcess m{absl::StrCat("127.0.0.1:", port), std::make_unique<accelopt::testing::ChildProcess>(std::move(*p))};
    absl::Status serving = accelopt::testing::WaitForServing(m.address, kStartTimeout);
    EXPECT_TRUE(serving.ok()) << serving << "\n" << m.process->Output();
    return m;
  }

  std::unique_ptr<v1::MemoryService::Stub> Stub() const {
    return v1::MemoryService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
};

// Iteration `iteration` of `job`: three selected pairs (1.5, 1.3 and a 0.5 regression) with kernels of a
// few KiB, so that each write carries some weight.
v1::SummarizeIterationRequest ThreePairIteration(const std::string& job, int iteration) {
  v1::SummarizeIterationRequest r = Request(job, job, iteration);
  for (auto [plan, speedup] : std::vector<std::pair<int, double>>{{0, 1.5}, {1, 1.3}, {2, 0.5}}) {
    v1::SampleResult s = Sample(absl::StrCat("it", iteration), plan, 0, speedup);
    s.mutable_kernel()->mutable_source()->append(std::string(4096, '#'));
    *r.add_samples() = std::move(s);
  }
  return r;
}

std::vector<v1::Experience> ListAll(v1::MemoryService::Stub* stub) {
  grpc::ClientContext context;
  v1::ListExperiencesResponse response;
  grpc::Status status = stub->ListExperiences(&context, v1::ListExperiencesRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return {response.experiences().begin(), response.experiences().end()};
}

TEST(MemoryProcessTest, SigkillWhileWritingLosesNothingAcknowledgedAndLeavesNothingHalfWritten) {
  accelopt::testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string data_dir = absl::StrCat(dir, "/data");
  MemoryProcess memory = MemoryProcess::Start(dir, data_dir, "first.log");

  // Writers summarize distinct iterations until the process dies; every acknowledged experience is kept.
  absl::Mutex mu;
  std::map<std::string, v1::Experience> acknowledged;  // guarded by mu until the writers are joined
  int acknowledged_calls = 0;                          // guarded by mu
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w) {
    writers.emplace_back([&, w] {
      auto stub = memory.Stub();
      for (int iteration = 0;; ++iteration) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1::SummarizeIterationResponse response;
        grpc::Status s =
            stub->SummarizeIteration(&context, ThreePairIteration(absl::StrCat("job-", w), iteration), &response);
        if (!s.ok()) return;  // the server is gone
        absl::MutexLock lock(&mu);
        EXPECT_EQ(response.added_size(), 3);
        for (const auto& e : response.added()) acknowledged[e.id()] = e;
        ++acknowledged_calls;
      }
    });
  }
  {
    // The writers count acknowledged calls under `mu`: wake when 60 have been acknowledged.
    absl::MutexLock lock(&mu);
    const bool enough = mu.AwaitWithTimeout(absl::Condition(
                                                +[](int* calls) { return *calls >= 60; }, &acknowledged_calls),
                                            absl::Seconds(60));
    ASSERT_TRUE(enough) << acknowledged_calls << " calls acknowledged\n" << memory.process->Output();
  }
  memory.process->Signal(SIGKILL);  // the writers are mid-call
  auto status = memory.process->WaitForExit(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status));
  for (auto& t : writers) t.join();

  // Straight from the data directory: every record parses and is complete, and every iteration is whole.
  {
    auto kv = storage::KvStore::Open(data_dir, ExperienceStore::Families());
    ASSERT_TRUE(kv.ok()) << kv.status();
    auto store = ExperienceStore::Open(kv->get());
    ASSERT_TRUE(store.ok()) << store.status();
    std::map<std::pair<std::string, int>, int> per_iteration;
    absl::Status scanned = (*store)->ForEach("", [&](const v1::Experience& e) {
      EXPECT_FALSE(e.id().empty());
      EXPECT_GT(e.sequence(), 0);
      EXPECT_FALSE(e.title().empty()) << e.id();
      EXPECT_FALSE(e.summary().empty()) << e.id();
      EXPECT_GE(e.speedup(), 1.0) << e.id();
      EXPECT_EQ(e.namespace_(), e.provenance().job_id()) << e.id();
      EXPECT_FALSE(e.provenance().candidate_id().empty()) << e.id();
      EXPECT_GT(e.provenance().created_at().seconds(), 0) << e.id();
      ++per_iteration[{e.provenance().job_id(), e.provenance().iteration()}];
      return true;
    });
    ASSERT_TRUE(scanned.ok()) << scanned;
    for (const auto& [key, n] : per_iteration) {
      EXPECT_EQ(n, 3) << key.first << " iteration " << key.second << " is half-written";
      auto completed = (*store)->CompletedIteration({key.first, key.first, key.second});
      ASSERT_TRUE(completed.ok());
      EXPECT_TRUE(completed->has_value()) << key.first << " iteration " << key.second;
    }
  }

  MemoryProcess restarted = MemoryProcess::Start(dir, data_dir, "second.log");
  auto stub = restarted.Stub();
  std::map<std::string, v1::Experience> stored;
  for (auto& e : ListAll(stub.get())) stored[e.id()] = e;
  absl::MutexLock lock(&mu);
  EXPECT_GE(stored.size(), acknowledged.size());
  for (const auto& [id, e] : acknowledged) {
    auto it = stored.find(id);
    ASSERT_NE(it, stored.end()) << "acknowledged experience " << id << " was lost";
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(e, it->second)) << id;
  }

  // The orchestrator retrying an acknowledged iteration after the crash stores nothing twice.
  grpc::ClientContext context;
  v1::SummarizeIterationResponse retried;
  ASSERT_TRUE(stub->SummarizeIteration(&context, ThreePairIteration("job-0", 0), &retried).ok());
  EXPECT_EQ(retried.added_size(), 3);
  EXPECT_EQ(ListAll(stub.get()).size(), stored.size());
}

struct CliResult {
  int exit_code;
  std::string output;
};

CliResult RunCli(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kCliBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = accelopt::testing::ChildProcess::Start(argv, absl::StrCat(dir, "/cli.log"));
  EXPECT_TRUE(p.ok()) << p.status();
  auto status = p->WaitForExit(std::chrono::seconds(60));
  EXPECT_TRUE(status.has_value());
  return {status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, p->Output()};
}

TEST(MemoryProcessTest, CliListsExportsAndImports) {
  accelopt::testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  MemoryProcess source = MemoryProcess::Start(dir, absl::StrCat(dir, "/source"), "source.log");
  {
    auto stub = source.Stub();
    for (int iteration = 0; iteration < 2; ++iteration) {
      grpc::ClientContext context;
      v1::SummarizeIterationResponse response;
      ASSERT_TRUE(stub->SummarizeIteration(&context, ThreePairIteration("job-a", iteration), &response).ok());
    }
    v1::SummarizeIterationRequest shared = ThreePairIteration("job-b", 0);
    shared.set_namespace_("team");
    grpc::ClientContext context;
    v1::SummarizeIterationResponse response;
    ASSERT_TRUE(stub->SummarizeIteration(&context, shared, &response).ok());
  }

  // JSON: an object whose `experiences` is the array, every namespace when none is named.
  CliResult listed = RunCli(dir, {"memory", "list", "--json", "--server", source.address});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  v1::ListExperiencesResponse parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(listed.output, &parsed).ok()) << listed.output;
  EXPECT_EQ(parsed.experiences_size(), 9);

  // The address comes from the local cluster's state in --data-dir.
  const std::string cluster_dir = absl::StrCat(dir, "/cluster");
  std::filesystem::create_directories(cluster_dir);
  std::ofstream(cluster_dir + "/cluster.json")
      << R"({"services": [{"name": "planner", "grpc_address": "127.0.0.1:1"}, {"name": "memory", "grpc_address": ")"
      << source.address << "\"}]}";
  CliResult table = RunCli(dir, {"memory", "list", "--namespace", "team", "--data-dir", cluster_dir});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("NAMESPACE"));
  EXPECT_THAT(table.output, HasSubstr("regression"));
  EXPECT_THAT(table.output, HasSubstr("3 experiences"));

  const std::string file = absl::StrCat(dir, "/memory.jsonl");
  CliResult exported = RunCli(dir, {"memory", "export", "--out", file, "--server", source.address});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("exported 9 experiences"));

  MemoryProcess target = MemoryProcess::Start(dir, absl::StrCat(dir, "/target"), "target.log");
  CliResult imported = RunCli(dir, {"memory", "import", file, "--server", target.address});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_THAT(imported.output, HasSubstr("imported 9 experiences, skipped 0"));
  std::vector<v1::Experience> before = ListAll(source.Stub().get());
  std::vector<v1::Experience> after = ListAll(target.Stub().get());
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(before[i], after[i])) << before[i].id();
  }
  CliResult again = RunCli(dir, {"memory", "import", file, "--server", target.address});
  EXPECT_THAT(again.output, HasSubstr("imported 0 experiences, skipped 9"));

  std::ofstream(absl::StrCat(dir, "/bad.jsonl")) << "{\"id\": \"x\"}\n";
  CliResult bad = RunCli(dir, {"memory", "import", absl::StrCat(dir, "/bad.jsonl"), "--server", target.address});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, HasSubstr("line 1"));

  CliResult unreachable = RunCli(dir, {"memory", "list", "--server", "127.0.0.1:1"});
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_THAT(unreachable.output, HasSubstr("cannot reach the memory service at 127.0.0.1:1"));
  EXPECT_EQ(RunCli(dir, {"memory", "export", "--server", source.address}).exit_code, 2);
}

}  // namespace
}  // namespace accelopt::memory

// Benchmarks of the optimization memory with 100k stored experiences: QueryExperiences latency (p50/p99,
// in-process and over loopback gRPC) and the sustained rate of SummarizeIteration-sized atomic inserts.
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "libs/config/validate.h"
#include "libs/core/log.h"
#include "libs/rpc/server_runner.h"
#include "services/memory/experience_query.h"
#include "services/memory/experience_store.h"
#include "services/memory/memory_service.h"

namespace accelopt::memory {
namespace {

constexpr int kStored = 100000;
constexpr int kPerIteration = 8;  // [TopK]
const char kNamespace[] = "bench-job";

// An experience of realistic size: a ~1.2 KB summary with two short snippets.
v1::Experience BenchExperience(int iteration, int k) {
  v1::Experience e;
  e.set_id(absl::StrCat("bench-", iteration, "-", k));
  e.set_namespace_(kNamespace);
  e.set_title("Hoist the loop-invariant weight load out of the row loop");
  e.set_description(std::string(600, 'd'));
  e.set_before_snippet(std::string(200, 'b'));
  e.set_after_snippet(std::string(200, 'a'));
  e.set_summary(std::string(1200, 's'));
  e.set_speedup(1.2);
  e.mutable_provenance()->set_job_id(kNamespace);
  e.mutable_provenance()->set_problem("matmul");
  e.mutable_provenance()->set_device(v1::DEVICE_SIM_TRN1);
  e.mutable_provenance()->set_model("gpt-oss-120b");
  e.mutable_provenance()->mutable_created_at()->set_seconds(1700000000 + iteration);
  e.mutable_provenance()->set_candidate_id(absl::StrCat("cand-", iteration, "-", k));
  e.mutable_provenance()->set_iteration(iteration);
  return e;
}

std::string BenchDir() {
  return absl::StrCat(std::filesystem::temp_directory_path().string(), "/accelopt_memory_bench");
}

// One memory of kStored experiences, filled on first use and shared by every benchmark of the process.
struct Memory {
  std::unique_ptr<storage::KvStore> kv;
  std::unique_ptr<ExperienceStore> store;
  int next_iteration = kStored / kPerIteration;

  static Memory& Get() {
    static Memory* memory = [] {
      auto* m = new Memory;
      std::filesystem::remove_all(BenchDir());
      m->kv = std::move(storage::KvStore::Open(BenchDir(), ExperienceStore::Families()).value());
      m->store = std::move(ExperienceStore::Open(m->kv.get()).value());
      std::vector<v1::Experience> chunk;
      for (int i = 0; i < kStored; ++i) {
        v1::Experience e = BenchExperience(i / kPerIteration, i % kPerIteration);
        e.set_sequence(i + 1);
        chunk.push_back(std::move(e));
        if (chunk.size() == 5000) {
          (void)m->store->Import(std::move(chunk)).value();
          chunk.clear();
        }
      }
      return m;
    }();
    return *memory;
  }
};

void ReportPercentiles(benchmark::State& state, std::vector<double>& micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  auto at = [&](double q) { return micros[std::min(micros.size() - 1, static_cast<size_t>(q * micros.size()))]; };
  state.counters["p50_us"] = at(0.50);
  state.counters["p99_us"] = at(0.99);
  state.counters["stored"] = static_cast<double>(Memory::Get().store->Count());
}

void BM_QueryInProcess(benchmark::State& state) {
  Memory& memory = Memory::Get();
  const auto policy = static_cast<v1::MemoryPolicy>(state.range(0));
  std::vector<double> micros;
  uint64_t seed = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    auto result = QueryExperiences(*memory.store, {kNamespace, 16, policy, ++seed});
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!result.ok() || result->size() != 16) state.SkipWithError("query failed");
    benchmark::DoNotOptimize(result);
  }
  ReportPercentiles(state, micros);
}
BENCHMARK(BM_QueryInProcess)->Arg(v1::MEMORY_POLICY_FIFO)->Arg(v1::MEMORY_POLICY_RANDOM)->ArgName("policy");

// QueryExperiences as the orchestrator sees it: the real service over loopback gRPC.
void BM_QueryGrpc(benchmark::State& state) {
  Memory& memory = Memory::Get();
  prometheus::Registry metrics_registry;
  MemoryMetrics metrics = MemoryMetrics::Create(metrics_registry);
  SummarizerRegistry summarizers;
  boost::asio::thread_pool pool(2);
  MemoryServiceImpl service(memory.store.get(), &summarizers, &metrics, &pool);
  v1::ServerConfig config;
  config::ApplyServerDefaults(&config);
  config.set_drain_seconds(1);
  rpc::ServerRunner runner("memory", config, std::make_shared<prometheus::Registry>());
  runner.AddService(&service);
  if (!runner.Start().ok()) {
    state.SkipWithError("server did not start");
    return;
  }
  auto stub =
      v1::MemoryService::NewStub(grpc::CreateChannel(runner.grpc_address(), grpc::InsecureChannelCredentials()));
  v1::QueryExperiencesRequest request;
  request.set_namespace_(kNamespace);
  request.set_capacity(16);
  request.set_policy(static_cast<v1::MemoryPolicy>(state.range(0)));
  std::vector<double> micros;
  for (auto _ : state) {
    request.set_seed(request.seed() + 1);
    grpc::ClientContext context;
    v1::QueryExperiencesResponse response;
    auto start = std::chrono::steady_clock::now();
    grpc::Status s = stub->QueryExperiences(&context, request, &response);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!s.ok() || response.experiences_size() != 16) state.SkipWithError("query failed");
  }
  ReportPercentiles(state, micros);
  runner.Shutdown();
  pool.join();
}
BENCHMARK(BM_QueryGrpc)->Arg(v1::MEMORY_POLICY_FIFO)->Arg(v1::MEMORY_POLICY_RANDOM)->ArgName("policy");

// Sustained inserts: one SummarizeIteration-sized atomic, synced batch of 8 experiences per iteration.
void BM_AppendIteration(benchmark::State& state) {
  Memory& memory = Memory::Get();
  std::vector<double> micros;
  for (auto _ : state) {
    const int iteration = memory.next_iteration++;
    std::vector<v1::Experience> batch;
    for (int k = 0; k < kPerIteration; ++k) batch.push_back(BenchExperience(iteration, k));
    auto start = std::chrono::steady_clock::now();
    auto r = memory.store->AppendIteration({kNamespace, kNamespace, iteration}, std::move(batch), true);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!r.ok() || r->written != kPerIteration) state.SkipWithError("append failed");
  }
  state.SetItemsProcessed(state.iterations() * kPerIteration);
  ReportPercentiles(state, micros);
}
BENCHMARK(BM_AppendIteration)->MinTime(3.0)->UseRealTime();

}  // namespace
}  // namespace accelopt::memory

int main(int argc, char** argv) {
  accelopt::core::SetLogLevel(accelopt::core::LogLevel::kWarning);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(accelopt::memory::BenchDir());
  return 0;
}

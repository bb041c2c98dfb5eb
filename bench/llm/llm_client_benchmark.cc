// Client overhead per request: batches of concurrent chat calls against the local LLM double over loopback
// HTTP or HTTPS, with kept-alive connections (reuse=1) or a connection per request (reuse=0). With an instant
// double, time per request is an upper bound on the overhead of client + loopback + double together; with a
// 20 ms double, overhead = batch time - 20 ms.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <fstream>

#include "absl/synchronization/mutex.h"
#include "libs/config/llm_config.h"
#include "libs/llm/openai_client.h"
#include "tests/llm_double/llm_double.h"
#include "tests/llm_double/test_tls.h"

namespace accelopt::llm {
namespace {

void RunBatches(benchmark::State& state, absl::Duration server_delay) {
  const int concurrency = static_cast<int>(state.range(0));
  const bool reuse = state.range(1) != 0;
  const bool https = state.range(2) != 0;
  testing::LlmDouble::Options options;
  std::string ca_file;
  if (https) {
    auto identity = testing::MakeSelfSignedIdentity({"localhost"}, {"127.0.0.1"});
    if (!identity.ok()) {
      state.SkipWithError("no TLS identity");
      return;
    }
    options.tls = *identity;
    ca_file = absl::StrCat("/tmp/llm_client_benchmark_ca_", getpid(), ".pem");
    std::ofstream(ca_file) << identity->cert_pem;
  }
  testing::DoubleScript script;
  script.fallback.content = std::string(2000, 'x');  // a plan-sized answer
  script.fallback.prompt_tokens = 3000;
  script.fallback.completion_tokens = 500;
  script.fallback.delay = server_delay;
  auto server = testing::LlmDouble::Start(script, options);
  if (!server.ok()) {
    state.SkipWithError("double did not start");
    return;
  }
  v1::LlmConfig config;
  config::ApplyLlmDefaults(&config);
  config.set_max_concurrency_per_endpoint(concurrency);
  config.set_idle_connection_seconds(reuse ? 30 : -1);
  config.set_ca_file(ca_file);
  *config.add_endpoints() = (*server)->Endpoint({"bench"});
  auto client = OpenAiClient::Create({config, {}, nullptr, 1});
  v1::ModelSpec spec;
  spec.set_model("bench");
  const std::string user(12000, 'k');  // a prompt with a kernel in it
  int64_t failures = 0;
  for (auto _ : state) {
    absl::Mutex mu;
    int remaining = concurrency;
    for (int i = 0; i < concurrency; ++i) {
      (*client)->Complete(CompletionRequest{"bench", spec, "system", user, static_cast<uint64_t>(i)},
                          [&](Metered<Completion> r) {
                            absl::MutexLock lock(&mu);
                            if (!r.value.ok()) ++failures;
                            --remaining;
                          });
    }
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &remaining));
  }
  state.SetItemsProcessed(state.iterations() * concurrency);
  state.counters["failures"] = static_cast<double>(failures);
  state.counters["connections"] = static_cast<double>((*server)->connections_accepted());
  if (!ca_file.empty()) std::remove(ca_file.c_str());
  state.counters["us_per_request"] = benchmark::Counter(static_cast<double>(state.iterations() * concurrency),
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_InstantDouble(benchmark::State& state) { RunBatches(state, absl::ZeroDuration()); }
void BM_Delayed20msDouble(benchmark::State& state) { RunBatches(state, absl::Milliseconds(20)); }

// Args: concurrency, reuse, https.
BENCHMARK(BM_InstantDouble)
    ->ArgNames({"concurrency", "reuse", "https"})
    ->ArgsProduct({{1, 64}, {0, 1}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Delayed20msDouble)
    ->ArgNames({"concurrency", "reuse", "https"})
    ->ArgsProduct({{64}, {0, 1}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accelopt::llm

BENCHMARK_MAIN();

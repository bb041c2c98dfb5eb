// Client overhead per request: batches of concurrent chat calls against the local LLM double over loopback
// HTTP. With an instant double, time per request is an upper bound on the overhead of client + loopback +
// double together; with a 20 ms double, overhead = batch time - 20 ms.
#include <benchmark/benchmark.h>

#include "absl/synchronization/mutex.h"
#include "libs/config/llm_config.h"
#include "libs/llm/openai_client.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::llm {
namespace {

void RunBatches(benchmark::State& state, absl::Duration server_delay) {
  const int concurrency = static_cast<int>(state.range(0));
  testing::DoubleScript script;
  script.fallback.content = std::string(2000, 'x');  // a plan-sized answer
  script.fallback.prompt_tokens = 3000;
  script.fallback.completion_tokens = 500;
  script.fallback.delay = server_delay;
  auto server = testing::LlmDouble::Start(script, {});
  if (!server.ok()) {
    state.SkipWithError("double did not start");
    return;
  }
  v1::LlmConfig config;
  config::ApplyLlmDefaults(&config);
  config.set_max_concurrency_per_endpoint(concurrency);
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
  state.counters["us_per_request"] = benchmark::Counter(static_cast<double>(state.iterations() * concurrency),
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_InstantDouble(benchmark::State& state) { RunBatches(state, absl::ZeroDuration()); }
void BM_Delayed20msDouble(benchmark::State& state) { RunBatches(state, absl::Milliseconds(20)); }

BENCHMARK(BM_InstantDouble)->Arg(1)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Delayed20msDouble)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accelopt::llm

BENCHMARK_MAIN();

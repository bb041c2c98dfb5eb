// One paper-scale iteration (B=6, N=12, K=2) of LLM calls against the double with reasoning-model latency,
// under the default limits, measuring whether any agent RPC would miss its deadline. Time is scaled: every
// duration (model latency 20-90 s, the 300 s request timeout, the 900 s agent RPC deadline) is divided by
// kTimeScale, so one iteration runs in about a second. Opt-in (not run by ctest): build target
// paper_scale_load and run it; it prints one line per agent and exits 1 when a batch would be lost.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/config/llm_config.h"
#include "libs/llm/openai_client.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::llm {
namespace {

constexpr double kTimeScale = 1000;  // 1 s of the real system = 1 ms here
constexpr int kBeam = 6, kPlans = 12, kSamples = 2;
// Orchestrator defaults: concurrent Plan and Implement RPCs, and the deadline of each agent RPC.
constexpr int kMaxPlannerRpcs = 16, kMaxExecutorRpcs = 32;
constexpr double kAgentDeadlineSeconds = 900;

absl::Duration Scaled(double real_seconds) { return absl::Seconds(real_seconds / kTimeScale); }

struct Outcome {
  double worst_rpc_seconds = 0;  // in real (unscaled) seconds
  int late_rpcs = 0;
  int failed_calls = 0;
};

// Runs `rpcs` agent RPCs of `calls_per_rpc` concurrent model calls each, at most `max_rpcs` RPCs in flight, on
// one client (one agent process), and measures each RPC from its start to its last answer.
Outcome RunAgent(OpenAiClient& client, const v1::ModelSpec& spec, int rpcs, int calls_per_rpc, int max_rpcs) {
  absl::Mutex mu;
  Outcome out;
  int next = 0, done = 0;
  std::function<void()> start_next;
  // Called with `mu` held.
  start_next = [&]() {
    const int rpc = next++;
    const absl::Time started = absl::Now();
    auto remaining = std::make_shared<int>(calls_per_rpc);
    for (int c = 0; c < calls_per_rpc; ++c) {
      client.Complete(
          CompletionRequest{"bench", spec, "system", std::string(12000, 'k'), static_cast<uint64_t>(rpc * 64 + c)},
          [&, started, remaining](Metered<Completion> r) {
            absl::MutexLock lock(&mu);
            if (!r.value.ok()) ++out.failed_calls;
            if (--*remaining > 0) return;
            const double real = absl::ToDoubleSeconds(absl::Now() - started) * kTimeScale;
            out.worst_rpc_seconds = std::max(out.worst_rpc_seconds, real);
            if (real > kAgentDeadlineSeconds) ++out.late_rpcs;
            ++done;
            if (next < rpcs) start_next();
          });
    }
  };
  {
    absl::MutexLock lock(&mu);
    for (int i = 0; i < std::min(rpcs, max_rpcs); ++i) start_next();
    struct Progress {
      int* done;
      int total;
    } progress{&done, rpcs};
    mu.Await(absl::Condition(
        +[](Progress* p) { return *p->done >= p->total; }, &progress));
  }
  return out;
}

int Main() {
  testing::DoubleScript script;
  script.fallback.content = "**Plan**\n```python\ndef kernel(a):\n    return a\n```\n";
  script.fallback.prompt_tokens = 6000;
  script.fallback.completion_tokens = 4000;
  script.fallback.delay = Scaled(20);
  script.fallback.max_delay = Scaled(90);
  testing::LlmDouble::Options double_options;
  double_options.threads = 2;
  auto server = testing::LlmDouble::Start(script, double_options);
  if (!server.ok()) {
    std::fprintf(stderr, "double did not start: %s\n", std::string(server.status().message()).c_str());
    return 2;
  }
  v1::LlmConfig config;
  config::ApplyLlmDefaults(&config);  // 16 concurrent requests per endpoint, 300 s per request
  config.set_default_timeout_seconds(config.default_timeout_seconds() / kTimeScale);
  *config.add_endpoints() = (*server)->Endpoint({"gpt-oss-120b"});
  v1::ModelSpec spec;
  spec.set_model("gpt-oss-120b");
  auto planner = OpenAiClient::Create({config, {}, nullptr, 1});
  auto executor = OpenAiClient::Create({config, {}, nullptr, 1});
  if (!planner.ok() || !executor.ok()) return 2;
  const absl::Time begin = absl::Now();
  Outcome plans = RunAgent(**planner, spec, kBeam, kPlans, kMaxPlannerRpcs);
  Outcome kernels = RunAgent(**executor, spec, kBeam * kPlans, kSamples, kMaxExecutorRpcs);
  const double iteration = absl::ToDoubleSeconds(absl::Now() - begin) * kTimeScale;
  std::printf(
      "time scale 1/%.0f; model latency 20-90 s; limits: %d requests per endpoint, %d planner and %d "
      "executor RPCs, %.0f s per RPC\n",
      kTimeScale, config.max_concurrency_per_endpoint(), kMaxPlannerRpcs, kMaxExecutorRpcs, kAgentDeadlineSeconds);
  std::printf("planner : %d RPCs x %d calls, worst RPC %.0f s, late %d, failed calls %d\n", kBeam, kPlans,
              plans.worst_rpc_seconds, plans.late_rpcs, plans.failed_calls);
  std::printf("executor: %d RPCs x %d calls, worst RPC %.0f s, late %d, failed calls %d\n", kBeam * kPlans, kSamples,
              kernels.worst_rpc_seconds, kernels.late_rpcs, kernels.failed_calls);
  std::printf("iteration (planner then executor, not pipelined): %.0f s\n", iteration);
  return plans.late_rpcs + kernels.late_rpcs + plans.failed_calls + kernels.failed_calls == 0 ? 0 : 1;
}

}  // namespace
}  // namespace accelopt::llm

int main() { return accelopt::llm::Main(); }

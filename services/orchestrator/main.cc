// accelopt-orchestrator: the job API and the beam search over a pool of profiler workers
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/storage/kv_store.h"
#include "services/orchestrator/grpc_clients.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/job_store.h"
#include "services/orchestrator/orchestrator_config.h"
#include "services/orchestrator/orchestrator_metrics.h"
#include "services/orchestrator/orchestrator_service.h"
#include "services/orchestrator/progress_watchdog.h"
#include "services/orchestrator/worker_pool.h"
#include "services/orchestrator/worker_resolver.h"

namespace {
constexpr char kUsage[] =
    "accelopt-orchestrator: the job API and the beam search over a pool of profiler workers\n\n"
    "Usage: accelopt-orchestrator [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.OrchestratorConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  using namespace accelopt;
  rpc::BlockShutdownSignals();
  config::ParseServiceFlags(argc, argv, kUsage);
  v1::OrchestratorConfig config;
  if (auto s = config::LoadServiceConfig(&config); !s.ok()) return rpc::FailStartup("accelopt-orchestrator", s);
  orchestrator::ApplyOrchestratorDefaults(&config);
  if (auto s = orchestrator::ValidateOrchestratorConfig(config); !s.ok()) {
    return rpc::FailStartup("accelopt-orchestrator", s);
  }
  // State is opened (and running jobs resumed) before the server starts, so health turns SERVING only
  // when the service can work.
  auto kv = storage::KvStore::Open(config.data_dir(), orchestrator::JobStoreFamilies());
  if (!kv.ok()) return rpc::FailStartup("accelopt-orchestrator", kv.status());
  orchestrator::JobStore store(kv->get());
  auto registry = std::make_shared<prometheus::Registry>();
  auto metrics = orchestrator::OrchestratorMetrics::Create(*registry);

  orchestrator::AgentRetryOptions retry;
  retry.policy = orchestrator::AgentRetryPolicyFromConfig(config);
  retry.metrics = &metrics;
  // Retries become events of their jobs once the engine exists.
  auto retry_relay = std::make_shared<orchestrator::AgentRetryRelay>();
  retry.on_retry = [retry_relay](const orchestrator::AgentRetryEvent& e) { (*retry_relay)(e); };
  orchestrator::GrpcPlannerClient planner(orchestrator::MakeChannel(config.planner_address()), retry);
  orchestrator::GrpcExecutorClient executor(orchestrator::MakeChannel(config.executor_address()), retry);
  orchestrator::GrpcMemoryClient memory(orchestrator::MakeChannel(config.memory_address()), retry);
  // Health turns NOT_SERVING when profiles wait beside idle worker slots and nothing moves.
  orchestrator::ProgressWatchdog watchdog(absl::Seconds(config.stall_seconds()));
  orchestrator::WorkerPoolOptions pool_options;
  pool_options.poll_interval = absl::Seconds(config.worker_poll_seconds());
  pool_options.resolve_interval = absl::Seconds(config.dns_refresh_seconds());
  pool_options.max_attempts = config.max_dispatch_attempts();
  pool_options.watchdog = &watchdog;
  orchestrator::WorkerPool pool(
      pool_options,
      config.profiler_dns().empty()
          ? orchestrator::StaticWorkers({config.profiler_addresses().begin(), config.profiler_addresses().end()})
          : orchestrator::DnsWorkers(config.profiler_dns()),
      [](const std::string& address) { return std::make_unique<orchestrator::GrpcProfilerWorker>(address); }, &metrics);
  pool.Start();

  orchestrator::JobEngine::Options options;
  options.max_running_jobs = config.max_running_jobs();
  options.max_planner_calls = config.max_planner_calls();
  options.max_executor_calls = config.max_executor_calls();
  options.max_memory_calls = config.max_memory_calls();
  options.limits = {config.max_kernel_bytes(), config.max_problem_bytes()};
  options.agent_timeout = absl::Seconds(config.agent_timeout_seconds());
  options.summarize_wait = absl::Seconds(config.summarize_wait_seconds());
  orchestrator::JobEngine engine(options, &store, {&planner, &executor, &memory, &pool}, &metrics);
  retry_relay->Set(engine.AgentRetryListener());
  if (auto s = engine.Start(); !s.ok()) return rpc::FailStartup("accelopt-orchestrator", s);
  orchestrator::JobServiceImpl service(&engine);
  return rpc::RunServer("orchestrator", config, config.server(), registry, {&service},
                        [&watchdog] { return watchdog.Check(); });
}

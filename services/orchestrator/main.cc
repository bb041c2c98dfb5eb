// accelopt-orchestrator: the job API and the beam search over a pool of profiler workers
#include <memory>

#include "absl/strings/str_cat.h"
#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/rpc/tls_credentials.h"
#include "libs/security/call_authorizer.h"
#include "libs/storage/checkpoint_command.h"
#include "libs/storage/kv_store.h"
#include "services/orchestrator/agent_providers.h"
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
    "       accelopt-orchestrator [--config FILE] --checkpoint DIR   (back up the job store, also while serving)\n"
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
  if (auto code = storage::RunCheckpointCommand(config.data_dir(), "accelopt-orchestrator")) return *code;
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
  auto auth = security::MakeServiceAuth(config.server().auth(), "orchestrator");
  if (!auth.ok()) return rpc::FailStartup("accelopt-orchestrator", auth.status());
  // Calls to the internal services present the orchestrator's identity (mutual TLS) when client_tls is set.
  auto credentials = rpc::MakeChannelCredentials(config.client_tls());
  if (!credentials.ok()) return rpc::FailStartup("accelopt-orchestrator", credentials.status());
  // Retries become events of their jobs once the engine exists.
  auto retry_relay = std::make_shared<orchestrator::AgentRetryRelay>();
  retry.on_retry = [retry_relay](const orchestrator::AgentRetryEvent& e) { (*retry_relay)(e); };
  auto planner_channel = orchestrator::MakeChannel(config.planner_address(), *credentials);
  auto executor_channel = orchestrator::MakeChannel(config.executor_address(), *credentials);
  auto memory_channel = orchestrator::MakeChannel(config.memory_address(), *credentials);
  orchestrator::GrpcPlannerClient planner(planner_channel, retry);
  orchestrator::GrpcExecutorClient executor(executor_channel, retry);
  orchestrator::GrpcMemoryClient memory(memory_channel, retry);
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
      // Workers found through profiler_dns are dialled by IP; over TLS their certificate must name the DNS name.
      [credentials = *credentials,
       tls_name = config.profiler_dns().substr(0, config.profiler_dns().rfind(':'))](const std::string& address) {
        return std::make_unique<orchestrator::GrpcProfilerWorker>(address, credentials, tls_name);
      },
      &metrics);
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
  // The agent services check submitted jobs' models (docs/agents.md).
  orchestrator::GrpcAgentInfoClient planner_info(planner_channel);
  orchestrator::GrpcAgentInfoClient executor_info(executor_channel);
  orchestrator::GrpcAgentInfoClient memory_info(memory_channel);
  orchestrator::AgentProviders providers({&planner_info, &executor_info, &memory_info},
                                         orchestrator::kAgentCheckDeadline);
  orchestrator::JobServiceImpl service(&engine, auth->authorizer(), &providers);
  // Readiness: NOT_SERVING while the store cannot take writes (disk full, corruption) or the engine stalls.
  storage::KvStore* state = kv->get();
  rpc::ServeOptions serve;
  serve.readiness = [state, &watchdog] {
    if (absl::Status store_health = state->Health(); !store_health.ok()) return store_health;
    return watchdog.Check();
  };
  return rpc::RunServer("orchestrator", config, config.server(), registry, {&service}, std::move(serve));
}

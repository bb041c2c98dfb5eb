// accelopt-orchestrator: the job API and the beam search over a pool of profiler workers
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/storage/kv_store.h"
#include "services/orchestrator/orchestrator_config.h"
#include "services/orchestrator/orchestrator_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-orchestrator: the job API and the beam search over a pool of profiler workers\n\n"
    "Usage: accelopt-orchestrator [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.OrchestratorConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  accelopt::rpc::BlockShutdownSignals();
  accelopt::config::ParseServiceFlags(argc, argv, kUsage);
  accelopt::v1::OrchestratorConfig config;
  if (auto s = accelopt::config::LoadServiceConfig(&config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-orchestrator", s);
  }
  accelopt::orchestrator::ApplyOrchestratorDefaults(&config);
  if (auto s = accelopt::orchestrator::ValidateOrchestratorConfig(config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-orchestrator", s);
  }
  // State is opened before the server starts, so health turns SERVING only when it is usable.
  auto store = accelopt::storage::KvStore::Open(config.data_dir(), {"jobs", "candidates", "events", "index"});
  if (!store.ok()) return accelopt::rpc::FailStartup("accelopt-orchestrator", store.status());
  auto registry = std::make_shared<prometheus::Registry>();
  accelopt::orchestrator::JobServiceImpl service;
  return accelopt::rpc::RunServer("orchestrator", config, config.server(), registry, {&service});
}

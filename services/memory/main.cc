// accelopt-memory: the summarizer agent and the optimization memory
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/storage/kv_store.h"
#include "services/memory/memory_config.h"
#include "services/memory/memory_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-memory: the summarizer agent and the optimization memory\n\n"
    "Usage: accelopt-memory [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.MemoryConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  accelopt::rpc::BlockShutdownSignals();
  accelopt::config::ParseServiceFlags(argc, argv, kUsage);
  accelopt::v1::MemoryConfig config;
  if (auto s = accelopt::config::LoadServiceConfig(&config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-memory", s);
  }
  accelopt::memory::ApplyMemoryDefaults(&config);
  if (auto s = accelopt::memory::ValidateMemoryConfig(config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-memory", s);
  }
  // State is opened before the server starts, so health turns SERVING only when it is usable.
  auto store = accelopt::storage::KvStore::Open(config.data_dir(), {"experiences", "index"});
  if (!store.ok()) return accelopt::rpc::FailStartup("accelopt-memory", store.status());
  auto registry = std::make_shared<prometheus::Registry>();
  accelopt::memory::MemoryServiceImpl service;
  return accelopt::rpc::RunServer("memory", config, config.server(), registry, {&service});
}

// accelopt-executor: the executor agent, which turns a kernel and a plan into new kernel sources
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "services/executor/executor_config.h"
#include "services/executor/executor_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-executor: the executor agent, which turns a kernel and a plan into new kernel sources\n\n"
    "Usage: accelopt-executor [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.ExecutorConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  accelopt::rpc::BlockShutdownSignals();
  accelopt::config::ParseServiceFlags(argc, argv, kUsage);
  accelopt::v1::ExecutorConfig config;
  if (auto s = accelopt::config::LoadServiceConfig(&config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-executor", s);
  }
  accelopt::executor::ApplyExecutorDefaults(&config);
  if (auto s = accelopt::executor::ValidateExecutorConfig(config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-executor", s);
  }
  auto registry = std::make_shared<prometheus::Registry>();
  accelopt::executor::ExecutorServiceImpl service;
  return accelopt::rpc::RunServer("executor", config, config.server(), registry, {&service});
}

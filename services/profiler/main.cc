// accelopt-profiler: a profiler worker that checks and times kernels on a device backend
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "services/profiler/profiler_config.h"
#include "services/profiler/profiler_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-profiler: a profiler worker that checks and times kernels on a device backend\n\n"
    "Usage: accelopt-profiler [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.ProfilerConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  accelopt::rpc::BlockShutdownSignals();
  accelopt::config::ParseServiceFlags(argc, argv, kUsage);
  accelopt::v1::ProfilerConfig config;
  if (auto s = accelopt::config::LoadServiceConfig(&config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-profiler", s);
  }
  accelopt::profiler::ApplyProfilerDefaults(&config);
  if (auto s = accelopt::profiler::ValidateProfilerConfig(config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-profiler", s);
  }
  auto registry = std::make_shared<prometheus::Registry>();
  accelopt::profiler::ProfilerServiceImpl service;
  return accelopt::rpc::RunServer("profiler", config, config.server(), registry, {&service});
}

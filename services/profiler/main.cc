// accelopt-profiler: a profiler worker that checks and times kernels on a device backend.
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/security/call_authorizer.h"
#include "services/profiler/profiler_config.h"
#include "services/profiler/profiler_readiness.h"
#include "services/profiler/profiler_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-profiler: a profiler worker that checks and times kernels on a device backend\n\n"
    "Usage: accelopt-profiler [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.ProfilerConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  using namespace accelopt;
  rpc::BlockShutdownSignals();
  config::ParseServiceFlags(argc, argv, kUsage);
  v1::ProfilerConfig config;
  if (auto s = config::LoadServiceConfig(&config); !s.ok()) return rpc::FailStartup("accelopt-profiler", s);
  profiler::ApplyProfilerDefaults(&config);
  if (auto s = profiler::ValidateProfilerConfig(config); !s.ok()) {
    return rpc::FailStartup("accelopt-profiler", s);
  }
  auto kernel_profiler =
      profiler::NewKernelProfiler(config, profiler::BuiltinBackends(), config.server().grpc_address());
  if (!kernel_profiler.ok()) return rpc::FailStartup("accelopt-profiler", kernel_profiler.status());
  auto registry = std::make_shared<prometheus::Registry>();
  auto auth = security::MakeServiceAuth(config.server().auth(), "profiler");
  if (!auth.ok()) return rpc::FailStartup("accelopt-profiler", auth.status());
  profiler::ProfilerServiceImpl service(kernel_profiler->get(), config.slots(), config.queue_limit(),
                                        profiler::ProfilerMetrics::Create(*registry), auth->authorizer());
  // Readiness: the start-up checks still hold and the sandbox really starts (liveness stays SERVING).
  profiler::ProfilerReadiness readiness(kernel_profiler->get());
  rpc::ServeOptions serve;
  serve.readiness = [&readiness] { return readiness.Check(); };
  return rpc::RunServer("profiler", config, config.server(), registry, {&service}, std::move(serve));
}

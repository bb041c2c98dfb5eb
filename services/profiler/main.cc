// accelopt-profiler: a profiler worker that checks and times kernels on a device backend.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/sandbox/worker_sandbox.h"
#include "services/profiler/kernel_profiler.h"
#include "services/profiler/profiler_config.h"
#include "services/profiler/profiler_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-profiler: a profiler worker that checks and times kernels on a device backend\n\n"
    "Usage: accelopt-profiler [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.ProfilerConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";

// Resolves a program name against PATH, as execvp would.
bool OnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path == nullptr ? "/usr/bin:/bin" : path;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}
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
  profiler::KernelProfilerOptions options;
  options.device = config.device();
  options.python = config.python();
  options.harness_dir = config.harness_dir().empty() ? profiler::DefaultHarnessDir() : config.harness_dir();
  const char* tmp = std::getenv("TMPDIR");
  options.scratch_root = !config.scratch_root().empty() ? config.scratch_root() : (tmp != nullptr ? tmp : "/tmp");
  options.limits = profiler::SandboxLimitsFromConfig(config.sandbox());
  options.use_bwrap = !config.sandbox().disable();
  options.bwrap = config.sandbox().bwrap();
  options.default_timeout_seconds = config.default_timeout_seconds();
  options.worker_name = config.server().grpc_address();
  if (!config.neuron_profile_bin().empty()) options.neuron_profile_bin = config.neuron_profile_bin();
  options.neuron_core = config.neuron_core();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    if (entry.path().filename().string().rfind("neuron", 0) == 0) options.neuron_devices.push_back(entry.path());
  }
  const std::string runner = config.device() == v1::DEVICE_NEURON ? "/run_neuron.py" : "/run_kernel.py";
  if (options.use_bwrap && !OnPath(options.bwrap)) {
    return rpc::FailStartup("accelopt-profiler",
                            absl::FailedPreconditionError(absl::StrCat(
                                "sandbox.bwrap: '", options.bwrap, "' not found (install the bubblewrap package)")));
  }
  if (!std::filesystem::exists(options.harness_dir + runner)) {
    return rpc::FailStartup("accelopt-profiler",
                            absl::FailedPreconditionError(
                                absl::StrCat("harness_dir: no ", runner.substr(1), " in '", options.harness_dir, "'")));
  }
  if (config.device() == v1::DEVICE_NEURON && !OnPath(options.neuron_profile_bin)) {
    return rpc::FailStartup("accelopt-profiler", absl::FailedPreconditionError(absl::StrCat(
                                                     "neuron_profile_bin: '", options.neuron_profile_bin,
                                                     "' not found (the neuron device needs the Neuron SDK tools)")));
  }
  if (access(options.python.c_str(), X_OK) != 0) {
    return rpc::FailStartup("accelopt-profiler", absl::FailedPreconditionError(
                                                     absl::StrCat("python: '", options.python, "' is not executable")));
  }
  auto worker_sandbox = sandbox::PrepareWorkerSandbox(options.harness_dir, options.scratch_root,
                                                      config.sandbox().uid_base(), config.slots());
  if (!worker_sandbox.ok()) return rpc::FailStartup("accelopt-profiler", worker_sandbox.status());
  options.harness_dir = worker_sandbox->harness.path();
  options.sandbox_uid_base = worker_sandbox->uids.base();
  auto registry = std::make_shared<prometheus::Registry>();
  profiler::KernelProfiler kernel_profiler(options);
  profiler::ProfilerServiceImpl service(&kernel_profiler, config.slots(), config.queue_limit(),
                                        profiler::ProfilerMetrics::Create(*registry));
  return rpc::RunServer("profiler", config, config.server(), registry, {&service});
}

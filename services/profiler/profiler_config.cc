#include "services/profiler/profiler_config.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "libs/sandbox/worker_sandbox.h"

namespace accelopt::profiler {

void ApplyProfilerDefaults(v1::ProfilerConfig* c) {
  if (c->device() == v1::DEVICE_UNSPECIFIED) c->set_device(v1::DEVICE_SIM_TRN1);
  if (c->slots() == 0) c->set_slots(1);
  if (c->queue_limit() == 0) c->set_queue_limit(16);
  if (c->default_timeout_seconds() == 0) c->set_default_timeout_seconds(300);
  if (c->python().empty()) c->set_python("/usr/bin/python3");
  auto* sb = c->mutable_sandbox();
  if (sb->cpu_seconds() == 0) sb->set_cpu_seconds(600);
  if (sb->memory_mb() == 0) sb->set_memory_mb(8192);
  if (sb->max_processes() == 0) sb->set_max_processes(64);
  if (sb->bwrap().empty()) sb->set_bwrap("bwrap");
  if (sb->tmp_mb() == 0) sb->set_tmp_mb(256);
  if (sb->scratch_mb() == 0) sb->set_scratch_mb(512);
}

absl::Status ValidateProfilerConfig(const v1::ProfilerConfig& c) {
  if (c.slots() < 1) return absl::InvalidArgumentError("slots: must be at least 1");
  if (c.queue_limit() < 0) return absl::InvalidArgumentError("queue_limit: must not be negative");
  if (c.default_timeout_seconds() <= 0) {
    return absl::InvalidArgumentError("default_timeout_seconds: must be positive");
  }
  const auto& sb = c.sandbox();
  for (auto [value, name] : {std::pair{sb.cpu_seconds(), "sandbox.cpu_seconds"},
                             {sb.memory_mb(), "sandbox.memory_mb"},
                             {sb.max_processes(), "sandbox.max_processes"},
                             {sb.tmp_mb(), "sandbox.tmp_mb"},
                             {sb.scratch_mb(), "sandbox.scratch_mb"}}) {
    if (value < 1) return absl::InvalidArgumentError(absl::StrCat(name, ": must be at least 1"));
  }
  if (sb.tmp_mb() + sb.scratch_mb() >= sb.memory_mb()) {
    return absl::InvalidArgumentError(absl::StrCat("sandbox.memory_mb: ", sb.memory_mb(),
                                                   " leaves no memory beside the tmpfs sizes (tmp_mb ", sb.tmp_mb(),
                                                   " + scratch_mb ", sb.scratch_mb(), ")"));
  }
  if (sb.uid_base() < 0) return absl::InvalidArgumentError("sandbox.uid_base: must not be negative");
  return absl::OkStatus();
}

sandbox::SandboxLimits SandboxLimitsFromConfig(const v1::SandboxConfig& c) {
  sandbox::SandboxLimits limits;
  limits.cpu_seconds = c.cpu_seconds();
  limits.memory_mb = c.memory_mb();
  limits.max_processes = c.max_processes();
  limits.tmp_mb = c.tmp_mb();
  limits.scratch_mb = c.scratch_mb();
  return limits;
}

absl::StatusOr<std::unique_ptr<KernelProfiler>> NewKernelProfiler(const v1::ProfilerConfig& config,
                                                                  const BackendRegistry& registry,
                                                                  std::string worker_name) {
  auto backend = registry.Create(config.device(), config);
  if (!backend.ok()) return backend.status();
  KernelProfilerOptions options;
  options.python = config.python();
  options.harness_dir = config.harness_dir().empty() ? DefaultHarnessDir() : config.harness_dir();
  const char* tmp = std::getenv("TMPDIR");
  options.scratch_root = !config.scratch_root().empty() ? config.scratch_root() : (tmp != nullptr ? tmp : "/tmp");
  options.limits = SandboxLimitsFromConfig(config.sandbox());
  options.use_bwrap = !config.sandbox().disable();
  options.bwrap = config.sandbox().bwrap();
  options.default_timeout_seconds = config.default_timeout_seconds();
  options.worker_name = std::move(worker_name);
  auto profiler = std::make_unique<KernelProfiler>(std::move(options), *std::move(backend));
  if (absl::Status s = profiler->CheckReady(); !s.ok()) return s;
  // A uid range of this process's own and a harness copy every sandbox user can read (0700 checkouts).
  auto worker_sandbox = sandbox::PrepareWorkerSandbox(profiler->options().harness_dir, profiler->options().scratch_root,
                                                      config.sandbox().uid_base(), std::max(1, config.slots()));
  if (!worker_sandbox.ok()) return worker_sandbox.status();
  profiler->AdoptWorkerSandbox(*std::move(worker_sandbox));
  return profiler;
}

}  // namespace accelopt::profiler

#include "services/profiler/profiler_config.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

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
                             {sb.max_processes(), "sandbox.max_processes"}}) {
    if (value < 1) return absl::InvalidArgumentError(absl::StrCat(name, ": must be at least 1"));
  }
  return absl::OkStatus();
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
  options.limits = {config.sandbox().cpu_seconds(), config.sandbox().memory_mb(), config.sandbox().max_processes()};
  options.use_bwrap = !config.sandbox().disable();
  options.bwrap = config.sandbox().bwrap();
  options.default_timeout_seconds = config.default_timeout_seconds();
  options.worker_name = std::move(worker_name);
  auto profiler = std::make_unique<KernelProfiler>(std::move(options), *std::move(backend));
  if (absl::Status s = profiler->CheckReady(); !s.ok()) return s;
  return profiler;
}

}  // namespace accelopt::profiler

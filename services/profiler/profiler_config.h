// Defaults and start-up validation of the profiler service's config, and the kernel profiler it describes.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "accelopt/v1/config.pb.h"
#include "libs/sandbox/sandbox.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/kernel_profiler.h"

namespace accelopt::profiler {

// Fills empty fields with their documented defaults (see config.proto).
void ApplyProfilerDefaults(v1::ProfilerConfig* config);

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateProfilerConfig(const v1::ProfilerConfig& config);

// The sandbox limits a (defaulted) config sets.
sandbox::SandboxLimits SandboxLimitsFromConfig(const v1::SandboxConfig& config);

// The kernel profiler of a defaulted, valid `config` on its device's backend from `registry`, after its
// start-up checks (KernelProfiler::CheckReady), holding its own sandbox uid range and staged harness copy
// (libs/sandbox/worker_sandbox.h); its results name `worker_name`. NOT_FOUND for a device without
// a backend; the backend's or the checks' error otherwise.
absl::StatusOr<std::unique_ptr<KernelProfiler>> NewKernelProfiler(const v1::ProfilerConfig& config,
                                                                  const BackendRegistry& registry,
                                                                  std::string worker_name);

}  // namespace accelopt::profiler

// Defaults and start-up validation of the profiler service's config.
#pragma once

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"
#include "libs/sandbox/sandbox.h"

namespace accelopt::profiler {

// Fills empty fields with their documented defaults (see config.proto).
void ApplyProfilerDefaults(v1::ProfilerConfig* config);

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateProfilerConfig(const v1::ProfilerConfig& config);

// The sandbox limits a (defaulted) config sets.
sandbox::SandboxLimits SandboxLimitsFromConfig(const v1::SandboxConfig& config);

}  // namespace accelopt::profiler

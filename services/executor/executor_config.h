// Defaults and start-up validation of the executor service's config.
#pragma once

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::executor {

// Fills empty fields with their documented defaults (see config.proto).
void ApplyExecutorDefaults(v1::ExecutorConfig* config);

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateExecutorConfig(const v1::ExecutorConfig& config);

}  // namespace accelopt::executor

// Defaults and start-up validation of the memory service's config.
#pragma once

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::memory {

// Fills empty fields with their documented defaults (see config.proto).
void ApplyMemoryDefaults(v1::MemoryConfig* config);

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateMemoryConfig(const v1::MemoryConfig& config);

}  // namespace accelopt::memory

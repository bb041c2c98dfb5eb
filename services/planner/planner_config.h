// Defaults and start-up validation of the planner service's config.
#pragma once

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::planner {

// Fills empty fields with their documented defaults (see config.proto).
void ApplyPlannerDefaults(v1::PlannerConfig* config);

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidatePlannerConfig(const v1::PlannerConfig& config);

}  // namespace accelopt::planner

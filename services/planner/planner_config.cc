#include "services/planner/planner_config.h"

#include "libs/config/llm_config.h"

namespace accelopt::planner {

void ApplyPlannerDefaults(v1::PlannerConfig* config) { config::ApplyLlmDefaults(config->mutable_llm()); }

absl::Status ValidatePlannerConfig(const v1::PlannerConfig& config) {
  return config::ValidateLlmConfig(config.llm(), "llm");
}

}  // namespace accelopt::planner

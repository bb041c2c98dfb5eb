// Defaults and start-up validation of the orchestrator service's config.
#pragma once

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"
#include "services/orchestrator/agent_retry.h"

namespace accelopt::orchestrator {

// Fills empty fields with their documented defaults (see config.proto).
void ApplyOrchestratorDefaults(v1::OrchestratorConfig* config);

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateOrchestratorConfig(const v1::OrchestratorConfig& config);

// The agent clients' retry policy from a config with defaults applied.
AgentRetryPolicy AgentRetryPolicyFromConfig(const v1::OrchestratorConfig& config);

}  // namespace accelopt::orchestrator

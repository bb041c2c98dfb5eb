// Defaults and validation of the LLM settings shared by the agent services.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::config {

void ApplyLlmDefaults(v1::LlmConfig* llm);
// INVALID_ARGUMENT naming the field, prefixed with `prefix` (e.g. "llm.max_attempts").
absl::Status ValidateLlmConfig(const v1::LlmConfig& llm, const std::string& prefix);

}  // namespace accelopt::config

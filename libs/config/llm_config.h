// Defaults and validation of the LLM settings shared by the agent services.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::config {

void ApplyLlmDefaults(v1::LlmConfig* llm);
// INVALID_ARGUMENT naming the field, prefixed with `prefix` (e.g. "llm.max_attempts"). Includes
// ValidateLlmEndpoints.
absl::Status ValidateLlmConfig(const v1::LlmConfig& llm, const std::string& prefix);

// The endpoints and client-endpoint policy alone: unique names, parsable URLs, at most one key source, header
// names and values that cannot inject a header, at least one model each with unique names and aliases, prices
// not negative, an allowed-hosts list when client endpoints are allowed. INVALID_ARGUMENT naming the field
// ("llm.endpoints[1].base_url: ...").
absl::Status ValidateLlmEndpoints(const v1::LlmConfig& llm, const std::string& prefix);

// False when `value` holds CR, LF or NUL (it would end the header it is sent in).
bool IsValidHeaderValue(absl::string_view value);

}  // namespace accelopt::config

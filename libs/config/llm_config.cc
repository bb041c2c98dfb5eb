#include "libs/config/llm_config.h"

#include "absl/strings/str_cat.h"

namespace accelopt::config {

void ApplyLlmDefaults(v1::LlmConfig* llm) {
  if (llm->max_concurrency_per_endpoint() == 0) llm->set_max_concurrency_per_endpoint(16);
  if (llm->max_attempts() == 0) llm->set_max_attempts(6);
  if (llm->initial_backoff_seconds() == 0) llm->set_initial_backoff_seconds(1);
  if (llm->max_backoff_seconds() == 0) llm->set_max_backoff_seconds(30);
  if (llm->default_timeout_seconds() == 0) llm->set_default_timeout_seconds(300);
}

absl::Status ValidateLlmConfig(const v1::LlmConfig& llm, const std::string& prefix) {
  auto field = [&](const char* name) { return absl::StrCat(prefix, ".", name); };
  if (llm.max_concurrency_per_endpoint() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(field("max_concurrency_per_endpoint"), ": must be at least 1"));
  }
  if (llm.max_attempts() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(field("max_attempts"), ": must be at least 1"));
  }
  if (llm.initial_backoff_seconds() < 0 || llm.max_backoff_seconds() < llm.initial_backoff_seconds()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field("max_backoff_seconds"), ": must be at least initial_backoff_seconds"));
  }
  if (llm.default_timeout_seconds() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(field("default_timeout_seconds"), ": must be positive"));
  }
  for (const auto& [model, price] : llm.prices()) {
    if (price.prompt_usd_per_mtok() < 0 || price.completion_usd_per_mtok() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, ".prices[", model, "]: prices must not be negative"));
    }
  }
  return absl::OkStatus();
}

}  // namespace accelopt::config

#include "services/executor/executor_config.h"

#include "libs/config/llm_config.h"

namespace accelopt::executor {

void ApplyExecutorDefaults(v1::ExecutorConfig* config) { config::ApplyLlmDefaults(config->mutable_llm()); }

absl::Status ValidateExecutorConfig(const v1::ExecutorConfig& config) {
  return config::ValidateLlmConfig(config.llm(), "llm");
}

}  // namespace accelopt::executor

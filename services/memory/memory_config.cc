#include "services/memory/memory_config.h"

#include "libs/config/llm_config.h"

namespace accelopt::memory {

void ApplyMemoryDefaults(v1::MemoryConfig* config) {
  if (config->data_dir().empty()) config->set_data_dir("./data/memory");
  config::ApplyLlmDefaults(config->mutable_llm());
}

absl::Status ValidateMemoryConfig(const v1::MemoryConfig& config) {
  return config::ValidateLlmConfig(config.llm(), "llm");
}

}  // namespace accelopt::memory

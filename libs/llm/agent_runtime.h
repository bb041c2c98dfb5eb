// What every agent service (planner, executor, memory's summarizer) builds at start-up to reach LLMs: the
// process's text models by provider name (today "openai": the OpenAI-compatible client, proxies from the
// environment, metrics in the process registry) and the prompt library, checked for the templates the
// service needs. RegisterDefaultModels (default_models.h, services/memory/summarizer_registry.h) turns each
// text model into an agent model of the service's role.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/config.pb.h"
#include "libs/llm/prompt_library.h"
#include "libs/llm/provider.h"
#include "prometheus/registry.h"

namespace accelopt::llm {

struct AgentRuntime {
  // Text models by provider name. Each serves every agent role through the prompt templates.
  ProviderRegistry<ModelProvider> providers;
  std::unique_ptr<PromptLibrary> prompts;
};

// `llm` has its defaults applied. INVALID_ARGUMENT naming `llm.prompt_root` when a template of `templates` is
// missing from the default prompt set; the providers' own configuration errors otherwise.
absl::StatusOr<AgentRuntime> StartAgentRuntime(const v1::LlmConfig& llm, std::shared_ptr<prometheus::Registry> registry,
                                               const std::vector<std::string>& templates);

}  // namespace accelopt::llm

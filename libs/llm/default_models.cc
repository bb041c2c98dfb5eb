#include "libs/llm/default_models.h"

#include "libs/llm/prompted_agents.h"

namespace accelopt::llm {

ProviderRegistry<PlannerModel> MakePlannerModels(ModelProvider& openai, const PromptLibrary& prompts) {
  ProviderRegistry<PlannerModel> models;
  models.Register("openai", std::make_unique<PromptedPlanner>(openai, prompts));
  return models;
}

ProviderRegistry<ExecutorModel> MakeExecutorModels(ModelProvider& openai, const PromptLibrary& prompts) {
  ProviderRegistry<ExecutorModel> models;
  models.Register("openai", std::make_unique<PromptedExecutor>(openai, prompts));
  return models;
}

}  // namespace accelopt::llm

// The agent model registries every agent service starts with: one entry per provider this build knows.
// Adding a provider (e.g. "builtin") means registering it here; the services do not change.
#pragma once

#include "libs/llm/executor_model.h"
#include "libs/llm/planner_model.h"
#include "libs/llm/prompt_library.h"
#include "libs/llm/provider.h"

namespace accelopt::llm {

// "openai": PromptedPlanner over `openai`. Neither argument is owned; both must outlive the registry.
ProviderRegistry<PlannerModel> MakePlannerModels(ModelProvider& openai, const PromptLibrary& prompts);
// "openai": PromptedExecutor over `openai`.
ProviderRegistry<ExecutorModel> MakeExecutorModels(ModelProvider& openai, const PromptLibrary& prompts);

}  // namespace accelopt::llm

// The agent models every agent service starts with (docs/agents.md, "Providers"): each text model of the
// AgentRuntime under its own name (driven by the prompt templates), plus "builtin" (no model). The planner
// and executor mains call RegisterDefaultModels; the memory service's summarizer has its own overload in
// services/memory/summarizer_registry.h. A new text provider registered in StartAgentRuntime therefore
// serves every role without touching the services.
#pragma once

#include "libs/llm/agent_runtime.h"
#include "libs/llm/executor_model.h"
#include "libs/llm/planner_model.h"
#include "libs/llm/provider.h"

namespace accelopt::llm {

// Registers a PromptedPlanner over each text model of `runtime`, then "builtin" (catalogue planner over the
// rewrite engine in $ACCELOPT_REWRITER_DIR or the installed/source copy). `runtime` must outlive `models`.
void RegisterDefaultModels(AgentRuntime& runtime, ProviderRegistry<PlannerModel>& models);
// The same for the executor: a PromptedExecutor per text model, then "builtin" (applies the plan's rewrite).
void RegisterDefaultModels(AgentRuntime& runtime, ProviderRegistry<ExecutorModel>& models);

}  // namespace accelopt::llm

#include "libs/llm/default_models.h"

#include <memory>

#include "libs/builtin/builtin_agents.h"
#include "libs/builtin/rewriter.h"
#include "libs/llm/prompted_agents.h"

namespace accelopt::llm {
namespace {

// Threads of each builtin agent: the rewrite engine runs in the sandbox, off the gRPC threads.
constexpr int kBuiltinThreads = 2;

std::shared_ptr<const builtin::Rewriter> DefaultRewriter() {
  builtin::RewriterOptions options;
  options.rewriter_dir = builtin::DefaultRewriterDir();
  return std::make_shared<builtin::Rewriter>(options);
}

template <typename Prompted, typename Model>
void RegisterPrompted(AgentRuntime& runtime, ProviderRegistry<Model>& models) {
  runtime.providers.ForEach([&](const std::string& name, ModelProvider& provider) {
    models.Register(name, std::make_unique<Prompted>(provider, *runtime.prompts));
  });
}

}  // namespace

void RegisterDefaultModels(AgentRuntime& runtime, ProviderRegistry<PlannerModel>& models) {
  RegisterPrompted<PromptedPlanner>(runtime, models);
  models.Register("builtin", std::make_unique<builtin::BuiltinPlanner>(DefaultRewriter(), kBuiltinThreads));
}

void RegisterDefaultModels(AgentRuntime& runtime, ProviderRegistry<ExecutorModel>& models) {
  RegisterPrompted<PromptedExecutor>(runtime, models);
  models.Register("builtin", std::make_unique<builtin::BuiltinExecutor>(DefaultRewriter(), kBuiltinThreads));
}

}  // namespace accelopt::llm

#include "services/memory/summarizer_registry.h"

#include <memory>

#include "services/memory/builtin_summarizer.h"
#include "services/memory/fake_summarizer.h"
#include "services/memory/prompted_summarizer.h"

namespace accelopt::memory {

void RegisterDefaultModels(llm::AgentRuntime& runtime, const v1::MemoryConfig& config,
                           SummarizerRegistry& summarizers) {
  runtime.providers.ForEach([&](const std::string& name, llm::ModelProvider& provider) {
    summarizers.Register(name, std::make_unique<PromptedSummarizer>(provider, *runtime.prompts));
  });
  summarizers.Register("builtin", std::make_unique<BuiltinSummarizer>());
  if (config.enable_fake_summarizer()) summarizers.Register("fake", std::make_unique<FakeSummarizer>());
}

}  // namespace accelopt::memory

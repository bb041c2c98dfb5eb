#include "services/memory/summarizer_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "libs/config/llm_config.h"

namespace accelopt::memory {
namespace {

llm::AgentRuntime StartRuntime() {
  v1::LlmConfig config;
  config::ApplyLlmDefaults(&config);
  auto runtime = llm::StartAgentRuntime(config, std::make_shared<prometheus::Registry>(), {"summarizer_system"});
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return *std::move(runtime);
}

TEST(SummarizerRegistryTest, EveryTextProviderAndBuiltinSummarize) {
  llm::AgentRuntime runtime = StartRuntime();
  SummarizerRegistry summarizers;
  RegisterDefaultModels(runtime, v1::MemoryConfig(), summarizers);
  EXPECT_EQ(summarizers.Names(), (std::vector<std::string>{"builtin", "openai"}));
  EXPECT_EQ(summarizers.Find("fake").status().message(),
            "model.provider: unknown provider 'fake' (known: builtin, openai)");
}

TEST(SummarizerRegistryTest, FakeOnlyWhenTheConfigEnablesIt) {
  llm::AgentRuntime runtime = StartRuntime();
  v1::MemoryConfig config;
  config.set_enable_fake_summarizer(true);
  SummarizerRegistry summarizers;
  RegisterDefaultModels(runtime, config, summarizers);
  EXPECT_EQ(summarizers.Names(), (std::vector<std::string>{"builtin", "fake", "openai"}));
}

}  // namespace
}  // namespace accelopt::memory

#include "libs/llm/default_models.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "libs/config/llm_config.h"

namespace accelopt::llm {
namespace {

AgentRuntime StartRuntime() {
  v1::LlmConfig config;
  config::ApplyLlmDefaults(&config);
  auto runtime = StartAgentRuntime(config, std::make_shared<prometheus::Registry>(), {"planner_system"});
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return *std::move(runtime);
}

TEST(DefaultModelsTest, EveryTextProviderAndBuiltinServeThePlannerAndExecutor) {
  AgentRuntime runtime = StartRuntime();
  EXPECT_EQ(runtime.providers.Names(), (std::vector<std::string>{"openai"}));
  ProviderRegistry<PlannerModel> planners;
  RegisterDefaultModels(runtime, planners);
  EXPECT_EQ(planners.Names(), (std::vector<std::string>{"builtin", "openai"}));
  ProviderRegistry<ExecutorModel> executors;
  RegisterDefaultModels(runtime, executors);
  EXPECT_EQ(executors.Names(), (std::vector<std::string>{"builtin", "openai"}));

  v1::ModelSpec spec;
  spec.set_provider("mystery");
  EXPECT_EQ(planners.Find(spec).status().message(),
            "model.provider: unknown provider 'mystery' (known: builtin, openai)");
  EXPECT_TRUE(executors.Find("builtin").ok());
}

TEST(DefaultModelsTest, EmptyRegistrySaysSoWhenAskedForAProvider) {
  ProviderRegistry<PlannerModel> none;
  EXPECT_EQ(none.Find("openai").status().message(), "model.provider: unknown provider 'openai' (known: none)");
  EXPECT_EQ(none.Find("").status().message(), "model.provider: required (one of: none)");
}

}  // namespace
}  // namespace accelopt::llm

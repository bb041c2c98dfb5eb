#include "libs/llm/agent_runtime.h"

#include "absl/strings/str_cat.h"
#include "libs/llm/openai_client.h"

namespace accelopt::llm {
namespace {

// Provider "openai": any OpenAI-compatible chat completions endpoint (docs/agents.md).
absl::StatusOr<std::unique_ptr<ModelProvider>> StartOpenAi(const v1::LlmConfig& llm,
                                                           std::shared_ptr<prometheus::Registry> registry) {
  absl::StatusOr<ProxyConfig> proxy = ProxyConfig::FromEnvironment();
  if (!proxy.ok()) return proxy.status();
  OpenAiClient::Options options;
  options.config = llm;
  options.proxy = *std::move(proxy);
  options.registry = std::move(registry);
  auto client = OpenAiClient::Create(std::move(options));
  if (!client.ok()) return client.status();
  return std::unique_ptr<ModelProvider>(*std::move(client));
}

}  // namespace

absl::StatusOr<AgentRuntime> StartAgentRuntime(const v1::LlmConfig& llm, std::shared_ptr<prometheus::Registry> registry,
                                               const std::vector<std::string>& templates) {
  AgentRuntime runtime;
  // The text providers of this build, one line each.
  auto openai = StartOpenAi(llm, registry);
  if (!openai.ok()) return openai.status();
  runtime.providers.Register("openai", *std::move(openai));

  runtime.prompts =
      std::make_unique<PromptLibrary>(llm.prompt_root().empty() ? DefaultPromptRoot() : llm.prompt_root());
  if (auto s = runtime.prompts->Check("default", templates); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("llm.prompt_root: ", s.message()));
  }
  return runtime;
}

}  // namespace accelopt::llm

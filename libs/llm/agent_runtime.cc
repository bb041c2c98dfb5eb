#include "libs/llm/agent_runtime.h"

#include "absl/strings/str_cat.h"

namespace accelopt::llm {

absl::StatusOr<AgentRuntime> StartAgentRuntime(const v1::LlmConfig& llm, std::shared_ptr<prometheus::Registry> registry,
                                               const std::vector<std::string>& templates) {
  absl::StatusOr<ProxyConfig> proxy = ProxyConfig::FromEnvironment();
  if (!proxy.ok()) return proxy.status();
  OpenAiClient::Options options;
  options.config = llm;
  options.proxy = *std::move(proxy);
  options.registry = std::move(registry);
  auto client = OpenAiClient::Create(std::move(options));
  if (!client.ok()) return client.status();
  auto prompts = std::make_unique<PromptLibrary>(llm.prompt_root().empty() ? DefaultPromptRoot() : llm.prompt_root());
  if (auto s = prompts->Check("default", templates); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("llm.prompt_root: ", s.message()));
  }
  return AgentRuntime{*std::move(client), std::move(prompts)};
}

}  // namespace accelopt::llm

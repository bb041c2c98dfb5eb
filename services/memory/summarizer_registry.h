// The summarizer providers of the memory service, by ModelSpec.provider name: the same ProviderRegistry the
// planner and executor use, filled by RegisterDefaultModels.
#pragma once

#include "accelopt/v1/config.pb.h"
#include "libs/llm/agent_runtime.h"
#include "libs/llm/provider.h"
#include "services/memory/summarizer.h"

namespace accelopt::memory {

using SummarizerRegistry = llm::ProviderRegistry<Summarizer>;

// Registers an PromptedSummarizer (prompted) over each text model of `runtime` under the model's name, then
// "builtin" (no model) and, when `config.enable_fake_summarizer()`, the test-only "fake". `runtime` must
// outlive `summarizers`.
void RegisterDefaultModels(llm::AgentRuntime& runtime, const v1::MemoryConfig& config, SummarizerRegistry& summarizers);

}  // namespace accelopt::memory

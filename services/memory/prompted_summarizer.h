// The prompted summarizer, registered for every text provider ("openai", ...): renders the prompt set's
// summarizer_system and summarizer_user templates (slow kernel, fast kernel, speedup), asks that
// ModelProvider, and reads the answer into an experience.
#pragma once

#include "absl/strings/string_view.h"
#include "libs/llm/prompt_library.h"
#include "libs/llm/provider.h"
#include "services/memory/summarizer.h"

namespace accelopt::memory {

// Reads a summarizer answer. An answer containing "No optimization found" is a no-op (as in the reference
// code). Otherwise: summary = the whole answer (trimmed); title = the first **bold** span (else the first
// line); before/after snippets = the first fenced block after the "Original code" / "Optimized code"
// headings; description = the text between the title line and the "Original code" heading.
SummaryOutput ParseSummaryAnswer(absl::string_view answer);

// Thread-safe; calls never block the caller (the provider runs them on its own threads).
class PromptedSummarizer final : public Summarizer {
 public:
  // Neither is owned; both must outlive this object.
  PromptedSummarizer(llm::ModelProvider& provider, const llm::PromptLibrary& prompts)
      : provider_(provider), prompts_(prompts) {}

  // INVALID_ARGUMENT naming model.endpoint, model.base_url, model.model, model.timeout_seconds, model.max_tokens or
  // model.prompt_set (which must hold summarizer_system and summarizer_user).
  absl::Status ValidateSpec(const v1::ModelSpec& model) const override;
  // Errors: the provider's (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ...), FAILED_PRECONDITION for
  // a template placeholder without a value, DATA_LOSS for an empty answer.
  void Summarize(const SummaryInput& input, SummaryCallback done) override;
  // summarizer_system + summarizer_user of model.prompt_set; nullopt when the set lacks them.
  std::optional<v1::PromptSetUsed> PromptsFor(const v1::ModelSpec& model) const override;

 private:
  llm::ModelProvider& provider_;
  const llm::PromptLibrary& prompts_;
};

}  // namespace accelopt::memory

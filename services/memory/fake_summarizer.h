// The "fake" summarizer provider: deterministic canned summaries without any model, for tests and for
// crash tests of the real binary (enabled only by MemoryConfig.enable_fake_summarizer).
#pragma once

#include "services/memory/summarizer.h"

namespace accelopt::memory {

// Answers at once, on the calling thread. Identical kernels give "No optimization found"; otherwise the
// title is the plan's title (or "Rewrite"), and the text names the speedup, the direction and the first
// line of each kernel. Usage counts one request and a quarter of the characters as tokens.
class FakeSummarizer final : public Summarizer {
 public:
  // Accepts any spec.
  absl::Status ValidateSpec(const v1::ModelSpec& model) const override;
  void Summarize(const SummaryInput& input, SummaryCallback done) override;
};

}  // namespace accelopt::memory

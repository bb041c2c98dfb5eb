// The "builtin" summarizer provider: writes the experience from the transformation the builtin planner chose,
// where it applied, the measured speedup and the changed lines of the two kernels. No model.
#pragma once

#include <string>

#include "services/memory/summarizer.h"

namespace accelopt::memory {

// Answers at once, on the calling thread. Identical kernels give "No optimization found". A pair from a
// regression is written as advice against the transformation (with `regression` set by the caller, the
// planner's ranking then counts it as negative evidence). Usage is zero.
class BuiltinSummarizer final : public Summarizer {
 public:
  // Accepts any spec.
  absl::Status ValidateSpec(const v1::ModelSpec& model) const override;
  void Summarize(const SummaryInput& input, SummaryCallback done) override;
};

// The lines of `before` and `after` between their common leading and trailing lines, each cut to at most
// `max_lines`.
std::pair<std::string, std::string> ChangedLines(const std::string& before, const std::string& after, int max_lines);

}  // namespace accelopt::memory

// Reading structure out of model answers: plan titles and fenced code blocks.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::llm {

// The text of the first non-empty **bold** span, else the first non-empty line with leading '#', '*', '-' and
// spaces removed; at most 200 characters. Empty for an empty text.
std::string PlanTitle(absl::string_view text);

// The first fenced code block (``` with an optional language tag on the opening line) with surrounding blank
// lines removed. NOT_FOUND "no fenced code block in the response", or NOT_FOUND "the response's code block is
// never closed (truncated answer?)".
absl::StatusOr<std::string> FirstFencedBlock(absl::string_view text);

}  // namespace accelopt::llm

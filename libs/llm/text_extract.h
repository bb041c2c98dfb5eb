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

// The kernel module in an executor's answer, as real models write it:
// - fenced blocks: the first one that defines `def kernel(`, else the first one (a reasoning preamble may quote
//   snippets before the full module);
// - no fence: a JSON tool-call style answer (an object, possibly under "arguments" as a JSON string) whose first
//   string value defining `def kernel(` is the code; or bare code that starts with import/from/def/@ and
//   defines `def kernel(`.
// NOT_FOUND "no fenced code block in the response" (a refusal or prose), or the truncation error of
// FirstFencedBlock when the only block is never closed.
absl::StatusOr<std::string> KernelSource(absl::string_view text);

}  // namespace accelopt::llm

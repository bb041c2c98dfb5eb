// The JSON of OpenAI-compatible Chat Completions: building request bodies and reading responses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::llm {

// The request body for `spec`: model, a system message (omitted when `system` is empty) and a user message,
// temperature / max_tokens / reasoning_effort when set, `seed` when given, then `spec.extra_body` applied as a
// JSON merge patch (RFC 7386: objects merge recursively, a null removes a key, e.g. {"seed": null}).
// INVALID_ARGUMENT naming model.extra_body when it does not convert.
absl::StatusOr<std::string> BuildChatRequestBody(const v1::ModelSpec& spec, absl::string_view system,
                                                 absl::string_view user, std::optional<uint64_t> seed);

// Token counts reported in a response's `usage` object.
struct ReportedUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;
};

// A parsed response. `usage` is filled whenever the body is JSON, even when `status` is an error.
struct ChatResponse {
  // OK, or DATA_LOSS saying precisely what is wrong: not JSON (with the byte offset), no choices,
  // choices[0].message missing, or no content (with the finish_reason).
  absl::Status status;
  std::string content;
  // From message.reasoning_content or message.reasoning, whichever is a non-empty string.
  std::string reasoning;
  ReportedUsage usage;
};

// Reads choices[0].message.content, the reasoning fields and usage (completion_tokens_details.reasoning_tokens).
ChatResponse ParseChatResponse(absl::string_view body);

}  // namespace accelopt::llm

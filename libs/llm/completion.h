// What a model call yields: a completion, and the metered outcome of any agent call (value plus usage).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::llm {

// One chat completion: the message text and, when the endpoint returns it, the reasoning text.
struct Completion {
  std::string text;
  std::string reasoning;
};

// The outcome of one agent call together with what it cost. `usage` is meaningful on failure too: requests
// and retries are always counted, and tokens whenever an answer reported them.
template <typename T>
struct Metered {
  absl::StatusOr<T> value;
  v1::TokenUsage usage;
};

// Adds every field of `from` to `into`.
void AddUsage(const v1::TokenUsage& from, v1::TokenUsage* into);

}  // namespace accelopt::llm

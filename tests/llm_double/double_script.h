// The script an LLM double answers from: ordered rules matched on the prompt, a default reply, misbehaviours,
// and a seeded fraction of failing calls. Parsed from JSON (the format is in docs/agents.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace accelopt::testing {

// What the double does with one request.
struct DoubleReply {
  enum class Fault {
    kNone,
    // Never answers (the client's timeout fires).
    kHang,
    // A 200 whose JSON body is cut in half.
    kTruncatedJson,
    // A 200 with "choices": [].
    kEmptyChoices,
    // A 200 whose choices[0].message has no content (finish_reason "length").
    kNoContent,
    // Closes the connection without answering.
    kCloseConnection,
  };
  int status = 200;
  // choices[0].message.content of a 200; "{{seed}}" and "{{request_index}}" are replaced by the request's seed
  // and the 0-based request number.
  std::string content;
  std::string reasoning;
  // Message field carrying `reasoning`: "reasoning_content" or "reasoning".
  std::string reasoning_field = "reasoning_content";
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;
  // Retry-After header value, sent when non-empty.
  std::string retry_after;
  // Raw body for non-200 answers (default: an OpenAI-style error object).
  std::string body;
  Fault fault = Fault::kNone;
  // Waits this long before answering; when max_delay is larger, a delay drawn uniformly from
  // [delay, max_delay] by a hash of the request number (deterministic for a given arrival order).
  absl::Duration delay = absl::ZeroDuration();
  absl::Duration max_delay = absl::ZeroDuration();
};

// Answers requests whose system or user message contains `match` (empty matches all), at most `times` times
// (0: unlimited).
struct DoubleRule {
  std::string match;
  int times = 0;
  DoubleReply reply;
};

struct DoubleScript {
  // Tried in order; the first matching rule with uses left answers.
  std::vector<DoubleRule> rules;
  // Answer when no rule matches.
  DoubleReply fallback;
  // Fraction of calls answered with `failure` instead, decided by a hash of (fail_seed, request body, how
  // many times that same body was seen): deterministic whatever the arrival order.
  double fail_fraction = 0;
  uint64_t fail_seed = 0;
  DoubleReply failure;
};

// INVALID_ARGUMENT naming the offending key.
absl::StatusOr<DoubleScript> ParseDoubleScript(absl::string_view json);

// True when the call with this body, seen `occurrence` times before, is one of the failing fraction.
bool FailsDeterministically(const DoubleScript& script, absl::string_view body, int occurrence);

}  // namespace accelopt::testing

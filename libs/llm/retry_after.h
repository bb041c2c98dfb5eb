// Reading the Retry-After header of a 429 or 503 answer.
#pragma once

#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace accelopt::llm {

// The delay asked for by a Retry-After value: delay-seconds (decimals accepted) or an HTTP date
// (IMF-fixdate, e.g. "Wed, 21 Oct 2026 07:28:00 GMT") taken relative to `now`. A date in the past gives
// zero. nullopt when the value is neither.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now);

}  // namespace accelopt::llm

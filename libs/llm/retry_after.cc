#include "libs/llm/retry_after.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace accelopt::llm {

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty()) return std::nullopt;
  double seconds = 0;
  if (absl::SimpleAtod(value, &seconds)) {
    if (!(seconds >= 0)) return std::nullopt;
    return absl::Seconds(seconds);
  }
  absl::Time when;
  std::string error;
  if (!absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(value), absl::UTCTimeZone(), &when, &error)) {
    return std::nullopt;
  }
  return when > now ? when - now : absl::ZeroDuration();
}

}  // namespace accelopt::llm

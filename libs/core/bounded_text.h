// Text a caller or a kernel chose, cut to a size a message, a log line or a reply can carry.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace accelopt::core {

// `text` when it has at most `max_bytes` bytes; else its first bytes up to a UTF-8 character boundary at or
// below `max_bytes`, followed by "... (N bytes more)". Valid UTF-8 stays valid.
std::string BoundedText(absl::string_view text, size_t max_bytes);

}  // namespace accelopt::core

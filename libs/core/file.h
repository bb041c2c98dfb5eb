// Whole-file reads and atomic whole-file writes.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::core {

// NOT_FOUND when the file does not exist, FAILED_PRECONDITION for a directory; the message names the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes to a temporary file beside `path`, then renames it over `path`: readers see old or new, never half.
absl::Status WriteFileAtomic(const std::string& path, absl::string_view contents);

}  // namespace accelopt::core

// Content hashes of kernels and other sources.
#pragma once

#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace accelopt::core {

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

}  // namespace accelopt::core

// Content hashes of kernels and other sources.
#pragma once

#include "absl/strings/string_view.h"
#include <string>
#include <string_view>

namespace accelopt::core {

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

}  // namespace accelopt::core

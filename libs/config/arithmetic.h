// Safe arithmetic over named numbers, for roofline terms such as "3*M*N" or "2*M*N*K + 4*(M*K + K*N)".
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace accelopt::config {

// Evaluates `expression`: numbers (integer, decimal, exponent), names looked up in `names`, binary + - * / //
// and ** (right-associative, binding tighter than unary minus as in Python), unary + and -, parentheses.
// Nothing else is accepted (no calls, no attributes). Errors name the offending position, an unknown name,
// a division by zero or a non-finite result.
absl::StatusOr<double> EvaluateArithmetic(std::string_view expression, const std::map<std::string, double>& names);

}  // namespace accelopt::config

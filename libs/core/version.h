// Build version of every AccelOpt binary.
#pragma once

namespace accelopt::core {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace accelopt::core

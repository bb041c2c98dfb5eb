// Physical plausibility of a result that passed the correctness protocol. A kernel cannot beat the problem's
// roofline bound, and cannot write its outputs to HBM without moving at least their bytes; a result that
// claims either is a measurement the kernel manipulated (or a model bug), never a speedup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "accelopt/v1/common.pb.h"

namespace accelopt::profiler {

// Percent of peak above which a latency is below the roofline bound (float rounding aside).
inline constexpr double kMaxPlausiblePeakPercent = 100.01;

// Why an OK `result` (latency, counters and peak percent filled) cannot be real, or empty when it can.
// `output_bytes` is the size of the kernel's outputs when the harness knows it.
std::string ImplausibilityReason(const v1::ProfileResult& result, std::optional<int64_t> output_bytes);

}  // namespace accelopt::profiler

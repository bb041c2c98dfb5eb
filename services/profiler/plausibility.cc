#include "services/profiler/plausibility.h"

#include "absl/strings/str_format.h"

namespace accelopt::profiler {

std::string ImplausibilityReason(const v1::ProfileResult& result, std::optional<int64_t> output_bytes) {
  if (result.has_peak_percent() && result.peak_percent() > kMaxPlausiblePeakPercent) {
    return absl::StrFormat(
        "latency %.4g ms is below the problem's roofline bound (%.1f%% of peak): physically impossible, so the "
        "timed work is not the work the outputs need",
        result.latency().mean_ms(), result.peak_percent());
  }
  if (output_bytes.has_value() && result.has_counters() &&
      static_cast<int64_t>(result.counters().hbm_write_bytes()) < *output_bytes) {
    return absl::StrFormat(
        "the timed run wrote %d bytes to HBM but the kernel's outputs are %d bytes: the outputs were not "
        "produced by the timed instructions",
        static_cast<int64_t>(result.counters().hbm_write_bytes()), *output_bytes);
  }
  return "";
}

}  // namespace accelopt::profiler

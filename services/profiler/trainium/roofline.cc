#include "services/profiler/trainium/roofline.h"

#include <algorithm>

namespace accelopt::trainium {

absl::string_view RooflineBoundName(RooflineBound bound) {
  switch (bound) {
    case RooflineBound::kMemory:
      return "memory";
    case RooflineBound::kMatmul:
      return "matmul";
    case RooflineBound::kVector:
      return "vector";
  }
  return "unknown";
}

RooflineResult ComputeRoofline(const RooflineTerms& terms, double latency_ns, const DeviceParams& params, int cores) {
  const double scale = 1e9 / std::max(cores, 1);
  const double memory_ns = terms.hbm_bytes / params.roofline_peak_bandwidth_bytes_per_s * scale;
  const double matmul_ns = terms.matmul_flops / params.roofline_peak_matmul_flops * scale;
  const double vector_ns = terms.vector_flops / params.roofline_peak_vector_flops * scale;
  RooflineResult result{memory_ns, 0, RooflineBound::kMemory};
  if (matmul_ns > result.peak_ns) result = {matmul_ns, 0, RooflineBound::kMatmul};
  if (vector_ns > result.peak_ns) result = {vector_ns, 0, RooflineBound::kVector};
  if (latency_ns > 0) result.percent_of_peak = 100.0 * result.peak_ns / latency_ns;
  return result;
}

}  // namespace accelopt::trainium

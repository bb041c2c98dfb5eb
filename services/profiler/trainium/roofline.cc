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

RooflineResult ComputeRoofline(const RooflineTerms& terms, double latency_ns, const DeviceParams& params, int cores,
                               double matmul_speedup) {
  const double scale = 1e9 / std::max(cores, 1);
  const double memory_ns = terms.hbm_bytes / params.roofline_peak_bandwidth_bytes_per_s * scale;
  const double matmul_ns =
      terms.matmul_flops / (params.roofline_peak_matmul_flops * std::max(matmul_speedup, 1.0)) * scale;
  const double vector_ns = terms.vector_flops / params.roofline_peak_vector_flops * scale;
  RooflineResult result{memory_ns, 0, RooflineBound::kMemory};
  if (matmul_ns > result.peak_ns) result = {matmul_ns, 0, RooflineBound::kMatmul};
  if (vector_ns > result.peak_ns) result = {vector_ns, 0, RooflineBound::kVector};
  if (latency_ns > 0) result.percent_of_peak = 100.0 * result.peak_ns / latency_ns;
  return result;
}

double MatmulSpeedup(const Trace& trace, const DeviceParams& params) {
  const bool narrow = std::any_of(trace.instructions.begin(), trace.instructions.end(), [](const Instruction& inst) {
    return inst.op == Op::kMatmul && !inst.cse && inst.dtype_bytes < 4;
  });
  return narrow ? std::max(params.pe_fp32_factor, 1.0) : 1.0;
}

}  // namespace accelopt::trainium

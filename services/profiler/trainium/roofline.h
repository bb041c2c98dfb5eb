// Percent of peak of a kernel against the roofline AccelOpt uses (accelopt-algorithm.md
// section 4.5): t_peak = max(vector_flops / PEAK_VEC, matmul_flops / PEAK_MM, hbm_bytes / PEAK_BW);
// the largest term names the bound.
#pragma once

#include "absl/strings/string_view.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// The ideal work of a problem (not of a particular kernel), from the per-problem formulas of
// section 4.5.
struct RooflineTerms {
  double vector_flops = 0;
  double matmul_flops = 0;
  double hbm_bytes = 0;
};

enum class RooflineBound { kMemory, kMatmul, kVector };

absl::string_view RooflineBoundName(RooflineBound bound);  // "memory", "matmul", "vector"

struct RooflineResult {
  double peak_ns = 0;          // t_peak
  double percent_of_peak = 0;  // 100 * t_peak / latency
  RooflineBound bound = RooflineBound::kMemory;
};

// Ties go to memory, then matmul. percent_of_peak is 0 when latency_ns is not positive. The peaks are one
// NeuronCore's; a kernel whose programs ran on `cores` NeuronCores (an nl.nc(2) launch) has that many times the
// compute and, with each core's HBM share, the bandwidth, so its t_peak is divided by `cores`. PEAK_MM is the fp32
// peak; a kernel whose matmuls run at a precision `matmul_speedup` times as fast (16-bit operands:
// pe_fp32_factor) is held to that precision's peak, so a correct kernel never exceeds 100%.
RooflineResult ComputeRoofline(const RooflineTerms& terms, double latency_ns, const DeviceParams& params, int cores = 1,
                               double matmul_speedup = 1);

// How many times fp32's rate the fastest matmul of `trace` runs at: pe_fp32_factor when a matmul has operands
// narrower than 4 bytes (`dt`), else 1.
double MatmulSpeedup(const Trace& trace, const DeviceParams& params);

}  // namespace accelopt::trainium

// The 16 neuron-profile summary fields AccelOpt records, computed from a scheduled trace with the
// counting rules reverse-engineered from real Trainium-1 profiles (reference section 5): DMA bytes
// count in full; PE and ACT engine accesses count per partition (free bytes, not times partitions),
// PE operands twice for fp32; DVE and Pool accesses are not counted.
#pragma once

#include <cstdint>

#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/scheduler.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Field names match neuron-profile's summary JSON (and AccelOpt's profile_list.json).
struct ProfileCounters {
  int64_t hbm_read_bytes = 0;
  int64_t hbm_write_bytes = 0;
  int64_t psum_read_bytes = 0;
  int64_t psum_write_bytes = 0;
  int64_t sbuf_read_bytes = 0;
  int64_t sbuf_write_bytes = 0;
  int64_t spill_reload_bytes = 0;
  int64_t spill_save_bytes = 0;
  double hardware_flops = 0;
  double transpose_flops = 0;
  double peak_flops_bandwidth_ratio = 0;
  double mm_arithmetic_intensity = 0;
  double hfu_estimated_percent = 0;              // a fraction 0..1, as neuron-profile reports it
  double scalar_engine_active_time_percent = 0;  // fraction of latency
  double vector_engine_active_time_percent = 0;
  double gpsimd_engine_active_time_percent = 0;
};

// Counters of `schedule` (made from `trace` with `params`) for a kernel whose total time is
// `latency_ns`.
ProfileCounters ComputeProfileCounters(const Trace& trace, const Schedule& schedule, const DeviceParams& params,
                                       double latency_ns);

}  // namespace accelopt::trainium

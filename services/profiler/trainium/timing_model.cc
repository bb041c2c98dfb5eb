#include "services/profiler/trainium/timing_model.h"

#include "services/profiler/trainium/profile_counters.h"
#include "services/profiler/trainium/scheduler.h"

namespace accelopt::trainium {

TimingResult RunTimingModel(const Trace& trace, const DeviceParams& params,
                            const std::optional<RooflineTerms>& roofline_terms) {
  const Schedule schedule = ScheduleTrace(trace, params);
  TimingResult result;
  result.kernel = trace.kernel;
  result.device = params.name;
  result.latency_ns = schedule.makespan_ns + params.kernel_launch_ns;
  result.latency_ms = result.latency_ns * 1e-6;
  result.counters = ComputeProfileCounters(trace, schedule, params, result.latency_ns);
  const double latency = result.latency_ns;
  if (latency > 0) {
    result.active = {schedule.busy.pe_ns / latency, schedule.busy.act_ns / latency, schedule.busy.dve_ns / latency,
                     schedule.busy.pool_ns / latency, schedule.busy.dma_ns / latency};
  }
  result.diagnostics = {static_cast<int64_t>(trace.instructions.size()),
                        schedule.eliminated_instructions,
                        schedule.traffic.rematerialized_bytes,
                        schedule.psum_bank_overflows,
                        schedule.peak_sbuf_live_bytes_pp,
                        schedule.demoted_sbuf_sites,
                        schedule.sbuf_ring_depth};
  if (roofline_terms.has_value()) {
    result.roofline = ComputeRoofline(*roofline_terms, latency, params, schedule.cores, MatmulSpeedup(trace, params));
  }
  return result;
}

}  // namespace accelopt::trainium

// Entry point of the Trainium timing model: schedules a parsed trace on a device and reports
// latency, the neuron-profile counters, engine activity and optional percent of peak.
//
//   absl::StatusOr<Trace> trace = ReadTraceFile(path);
//   absl::StatusOr<DeviceParams> device = BuiltinDeviceParams("trn1");
//   TimingResult result = RunTimingModel(*trace, *device, std::nullopt);
#pragma once

#include <optional>

#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/roofline.h"
#include "services/profiler/trainium/timing_result.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Deterministic and thread-compatible (no shared state): concurrent calls on different traces are
// safe.
TimingResult RunTimingModel(const Trace& trace, const DeviceParams& params,
                            const std::optional<RooflineTerms>& roofline_terms);

}  // namespace accelopt::trainium

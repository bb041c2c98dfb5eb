// `accelopt profile`: check and time one kernel, locally in the sandbox or on a profiler worker.
#pragma once

#include <string>

#include "accelopt/v1/common.pb.h"
#include "cli/command.h"

namespace accelopt::cli {

Command ProfileCommand();

// The result as one JSON object: verdict, message, line, latency_ms, counters (neuron-profile names),
// engine_active, peak_percent and bound (when known), device, seeds_checked, max_rel_l2, instructions,
// device_seconds.
std::string ProfileResultJson(const v1::ProfileResult& result);

}  // namespace accelopt::cli

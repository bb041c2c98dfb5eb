// Parsing of `neuron-profile view --output-format summary-json` and the reference latency protocol's
// statistics (AccelOpt: 10 profiled runs per round, up to 3 rounds, keep the round with the smallest spread).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::profiler {

struct NeuronSummary {
  double total_time_seconds = 0;
  // The 16 fields AccelOpt records, when present in the summary.
  v1::ProfileCounters counters;
};

// Accepts the summary as `{"summary": [{...}, ...]}` or as a bare list, and reads the first entry.
// INVALID_ARGUMENT naming what is missing when there is no entry or no positive `total_time`.
absl::StatusOr<NeuronSummary> ParseNeuronProfileSummary(const std::string& json);

// Mean, min, max and (max - min) / min of one round of run times (milliseconds).
v1::LatencyStats RoundStats(const std::vector<double>& times_ms);

// True when the round is stable enough to stop retrying (relative spread at most `tolerance`, 1% by default).
bool RoundIsStable(const v1::LatencyStats& round, double tolerance = 0.01);

}  // namespace accelopt::profiler

// What the timing model reports for one kernel: latency, the neuron-profile counters, per-engine
// active fractions, model diagnostics and, when roofline terms were given, percent of peak.
// Serialisable to JSON with a stable key order (the calibration script and the profiler service
// parse it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "services/profiler/trainium/profile_counters.h"
#include "services/profiler/trainium/roofline.h"

namespace accelopt::trainium {

// Fraction of the latency during which each engine executed at least one instruction.
struct EngineActivity {
  double pe = 0;
  double act = 0;
  double dve = 0;
  double pool = 0;
  double dma = 0;
};

// Facts about the modelled run that are not neuron-profile fields but explain it.
struct ModelDiagnostics {
  int64_t instructions = 0;
  int64_t eliminated_instructions = 0;  // cse=1 and loads replaced by re-materialisation
  int64_t rematerialized_bytes = 0;
  int64_t psum_bank_overflows = 0;
  double peak_sbuf_live_bytes_pp = 0;
  int demoted_sbuf_sites = 0;  // declaration sites streamed because SBUF overflowed
  int sbuf_ring_depth = 0;     // smallest ring depth of any declaration site
};

struct TimingResult {
  std::string kernel;
  std::string device;
  double latency_ns = 0;
  double latency_ms = 0;
  ProfileCounters counters;
  EngineActivity active;
  ModelDiagnostics diagnostics;
  std::optional<RooflineResult> roofline;
};

// One JSON object: {"kernel", "device", "latency_ns", "latency_ms", "counters": {16 fields},
// "engine_active": {pe, act, dve, pool, dma}, "diagnostics": {...}, and "roofline": {peak_ms,
// percent_of_peak, bound} when set}.
std::string ToJson(const TimingResult& result);

// A short human-readable report.
std::string ToText(const TimingResult& result);

}  // namespace accelopt::trainium

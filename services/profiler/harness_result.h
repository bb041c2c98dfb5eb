// The JSON object the Python harness writes (services/profiler/harness/README.md), as a typed struct.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::profiler {

struct HarnessResult {
  v1::Verdict verdict = v1::VERDICT_UNSPECIFIED;
  std::string message;
  int line = 0;
  int seeds_checked = 0;
  double max_rel_l2 = 0;
  std::optional<double> fresh_rel_l2;  // the fresh run's error; absent when it was not compared
  int64_t instructions = 0;
  std::string trace_path;  // as seen inside the sandbox, e.g. /scratch/trace.txt; empty when none
  std::optional<v1::Roofline> roofline;
  // Bytes of the kernel's outputs (from the checked runs); absent in timing-only mode.
  std::optional<int64_t> output_bytes;
};

// INVALID_ARGUMENT when `json` is not a harness result (names the missing or bad key).
absl::StatusOr<HarnessResult> ParseHarnessResult(const std::string& json);

// The marker harness_guard.py writes when kernel code attempts a forbidden operation.
struct SandboxViolation {
  std::string detail;  // e.g. "socket.connect", "write to /etc/passwd"
  int line = 0;        // kernel source line
};

// Never fails: an unreadable marker still means a violation, with detail "unknown operation".
SandboxViolation ParseViolationMarker(const std::string& json);

// Maps "OK", "COMPILE_ERROR", ... to the enum; VERDICT_UNSPECIFIED for an unknown name.
v1::Verdict VerdictFromName(const std::string& name);

}  // namespace accelopt::profiler

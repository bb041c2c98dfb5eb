// Reader for the instruction trace format (TRACE_FORMAT.md, version 1) written by the simulator
// front end.
//
//   absl::StatusOr<Trace> trace = ReadTraceFile("/tmp/kernel.trace");
//
// The reader is a single pass over the text without regular expressions; unknown keys are skipped
// so that newer writers stay readable.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Parses a whole trace held in memory. Returns INVALID_ARGUMENT naming the 1-based line number and
// the offending key for any malformed record: bad header or version, missing `M`, unknown record
// kind or op/engine/buffer name, missing required key, non-integer value, non-increasing id, a
// dependency on a later or unknown instruction, a reference to an allocation that is not live, or
// an `instructions=` count that does not match the `I` records.
absl::StatusOr<Trace> ParseTrace(absl::string_view text);

// Reads and parses a trace file. NOT_FOUND if it cannot be opened; otherwise as ParseTrace, with
// the path in the message.
absl::StatusOr<Trace> ReadTraceFile(const std::string& path);

}  // namespace accelopt::trainium

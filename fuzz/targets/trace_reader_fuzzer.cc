// Simulator instruction traces through trainium::ParseTrace.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "services/profiler/trainium/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = accelopt::trainium::ParseTrace(text);
  if (!trace.ok() && trace.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
  return 0;
}

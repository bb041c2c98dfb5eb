// Helpers shared by the trainium_test sources: parse an inline trace or die, and device parameters
// with round numbers so expected times can be computed by hand.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/trace.h"
#include "services/profiler/trainium/trace_reader.h"

namespace accelopt::trainium {

// Parses `body` (records after the header and M line) as a trace; fails the test on a parse error.
inline Trace ParseTraceForTest(const std::string& body) {
  int count = 0;
  for (size_t pos = 0; (pos = body.find("I id=", pos)) != std::string::npos; ++pos) ++count;
  const std::string text =
      "accelopt-trace 1\nM kernel=test.py timing_only=1 instructions=" + std::to_string(count) + "\n" + body;
  absl::StatusOr<Trace> trace = ParseTrace(text);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *std::move(trace) : Trace{};
}

// trn1 parameters with the fitted overheads zeroed and 1 GHz clocks: one cycle is one nanosecond,
// and DMAs move 1 byte/ns per queue with no descriptor overhead. Compiler effects that change costs
// are off.
inline DeviceParams SimpleDeviceForTest() {
  absl::StatusOr<DeviceParams> params = BuiltinDeviceParams("trn1");
  EXPECT_TRUE(params.ok()) << params.status();
  DeviceParams p = *params;
  p.pe_clock_hz = p.act_clock_hz = p.dve_clock_hz = p.pool_clock_hz = 1e9;
  p.pe_overhead_cycles = p.pe_single_pass_overhead_cycles = p.act_overhead_cycles = p.dve_overhead_cycles =
      p.pool_overhead_cycles = 0;
  p.dma_queue_bytes_per_ns = 1;
  p.dma_descriptor_overhead_bytes = 0;
  p.dma_queue_overhead_ns = 0;
  p.dma_fixed_latency_ns = 0;
  p.hbm_bytes_per_ns = 1e6;
  p.sync_latency_ns = 0;
  p.kernel_launch_ns = 0;
  p.act_outputs_to_psum_for_dve = 0;
  return p;
}

}  // namespace accelopt::trainium

// Constants of a modelled NeuronCore (clocks, per-instruction cost terms, DMA, memory sizes,
// profiler and roofline peaks), loaded from a device YAML file such as devices/trn1.yaml.
//
// File format: a mapping with `device: <name>`, an optional `description`, and `constants:`, a
// mapping from each constant's name to `{value: <number>, source: "<tag> <where it comes from>"}`
// where tag is one of [doc], [meas], [est], [fit] (or [derived]). Every constant below is required;
// unknown keys are rejected by name.
//
// The trn1 and trn2 files are embedded into the library at build time (BuiltinDeviceParams), so
// binaries do not depend on the source tree; LoadDeviceParamsFile reads an edited copy (the
// calibration script uses this).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::trainium {

// All values in base units: Hz, cycles of the named engine, ns, bytes, FLOP/s.
struct DeviceParams {
  std::string name;

  // Engine clocks.
  double pe_clock_hz = 0;
  double act_clock_hz = 0;
  double dve_clock_hz = 0;
  double pool_clock_hz = 0;

  // PE array: cycles = max(min(pe_min_stationary, nstat), n) * factor + overhead; the factor applies to fp32
  // (dt == 4) operands, which also take pe_overhead_cycles; 1- and 2-byte operands (one pass) take
  // pe_single_pass_overhead_cycles.
  double pe_array_dim = 0;
  double pe_fp32_factor = 0;
  double pe_transpose_fp32_factor = 0;
  double pe_min_stationary = 0;
  double pe_overhead_cycles = 0;              // of a 4-byte (fp32: four-pass) PE instruction
  double pe_single_pass_overhead_cycles = 0;  // of a PE instruction on 1- or 2-byte operands (one pass)

  // ACT / DVE / Pool cost terms.
  double min_instruction_cycles = 0;  // the 64 of max(64, N)
  double act_overhead_cycles = 0;
  double dve_overhead_cycles = 0;
  double pool_overhead_cycles = 0;
  double dve_tensor_tensor_cycles_per_elem = 0;  // both inputs in SBUF, fp32
  double reciprocal_cycles_per_elem = 0;
  double scan_cycles_per_elem = 0;
  double bn_aggr_cycles_per_elem = 0;
  double pool_cycles_per_elem = 0;  // elementwise ops on GpSimd
  double pool_fixed_op_cycles = 0;  // iota / affine_select: fixed + N
  double strided_access_factor = 0;
  double dynamic_access_min_cycles = 0;  // an instruction with a dynamic-offset operand: max(this, N)

  // DMA.
  double dma_queues = 0;
  double dma_partitions_per_queue = 0;
  double dma_queue_bytes_per_ns = 0;
  double dma_descriptor_overhead_bytes = 0;  // b0 in eff(b) = b / (b + b0)
  double dma_queue_overhead_ns = 0;          // queue occupancy per DMA besides the transfer
  double dma_fixed_latency_ns = 0;           // completion latency, overlaps with other DMAs
  double hbm_bytes_per_ns = 0;               // the core's share of HBM bandwidth

  // Engine choice for eng=auto ops that ACT or DVE may run: ACT wins unless DVE finishes this much
  // earlier.
  double act_preference_ns = 0;

  // Synchronisation and launch.
  double sync_latency_ns = 0;  // cross-engine semaphore wait
  double kernel_launch_ns = 0;

  // On-chip memory.
  double sbuf_bytes_pp = 0;
  double sbuf_reserve_bytes_pp = 0;
  double sbuf_ring_depth = 0;
  double spill_reuse_window_instructions = 0;  // a streamed tile read this soon after its write needs no reload
  // 1: ACT outputs read by a DVE tensor_tensor are placed in PSUM (the DVE op then runs at one
  // element per cycle and the write counts as psum_write_bytes); 0: off.
  double act_outputs_to_psum_for_dve = 0;
  double psum_banks = 0;
  double psum_bank_bytes = 0;
  // 1: VectorE and GpSimd share the SBUF access port (trn1): an instruction of one that reads or
  // writes SBUF waits until the other's SBUF instruction is done; 0: no such restriction (trn2).
  double dve_pool_shared_sbuf_port = 0;

  // neuron-profile constants.
  double peak_flops_bandwidth_ratio = 0;

  // Roofline peaks (percent of peak, accelopt-algorithm.md section 4.5).
  double roofline_peak_bandwidth_bytes_per_s = 0;
  double roofline_peak_vector_flops = 0;
  double roofline_peak_matmul_flops = 0;
};

// Parses a device file. INVALID_ARGUMENT for YAML syntax errors (with line), unknown keys (named),
// missing constants (named), entries without a value or a tagged source, and values out of range.
absl::StatusOr<DeviceParams> ParseDeviceParams(absl::string_view yaml_text);

// Reads and parses a device file; NOT_FOUND if it cannot be read.
absl::StatusOr<DeviceParams> LoadDeviceParamsFile(const std::string& path);

// The device files embedded at build time: "trn1" or "trn2". NOT_FOUND for other names.
absl::StatusOr<DeviceParams> BuiltinDeviceParams(absl::string_view name);

}  // namespace accelopt::trainium

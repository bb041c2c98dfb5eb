#include "services/profiler/trainium/profile_counters.h"

namespace accelopt::trainium {
namespace {

int64_t InputBytes(const Instruction& inst, Buffer buffer) {
  int64_t total = 0;
  for (const Operand& operand : inst.inputs) {
    if (operand.buffer == buffer) total += operand.bytes_pp;
  }
  return total;
}

int64_t OutputBytes(const Instruction& inst, Buffer buffer) {
  return inst.has_output && inst.output.buffer == buffer ? inst.output.bytes_pp : 0;
}

// Source and destination memories of a DMA, from its operands, falling back to its direction.
void DmaEnds(const Instruction& inst, Buffer* source, Buffer* destination) {
  *source = inst.dma_direction == DmaDirection::kStore ? Buffer::kSbuf : Buffer::kHbm;
  *destination = inst.dma_direction == DmaDirection::kStore ? Buffer::kHbm : Buffer::kSbuf;
  if (!inst.inputs.empty()) *source = inst.inputs[0].buffer;
  if (inst.has_output) *destination = inst.output.buffer;
}

}  // namespace

ProfileCounters ComputeProfileCounters(const Trace& trace, const Schedule& schedule, const DeviceParams& params,
                                       double latency_ns) {
  ProfileCounters c;
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    const Instruction& inst = trace.instructions[i];
    const Engine engine = schedule.instructions[i].engine;
    switch (engine) {
      case Engine::kPe: {
        const int64_t fp32 = inst.dtype_bytes >= 4 ? 2 : 1;
        c.sbuf_read_bytes += fp32 * InputBytes(inst, Buffer::kSbuf);
        c.psum_write_bytes += fp32 * OutputBytes(inst, Buffer::kPsum);
        if (schedule.instructions[i].output_to_psum) c.psum_write_bytes += fp32 * OutputBytes(inst, Buffer::kSbuf);
        const double flops = 2.0 * inst.partitions * static_cast<double>(inst.stationary_free) *
                             static_cast<double>(inst.free_elems) * static_cast<double>(fp32);
        c.hardware_flops += flops;
        if (inst.op == Op::kTranspose) c.transpose_flops += flops;
        break;
      }
      case Engine::kAct:
        c.sbuf_read_bytes += InputBytes(inst, Buffer::kSbuf);
        c.psum_read_bytes += InputBytes(inst, Buffer::kPsum);
        if (schedule.instructions[i].output_to_psum) {
          c.psum_write_bytes += OutputBytes(inst, Buffer::kSbuf);
        } else {
          c.sbuf_write_bytes += OutputBytes(inst, Buffer::kSbuf);
          c.psum_write_bytes += OutputBytes(inst, Buffer::kPsum);
        }
        break;
      case Engine::kDma: {
        Buffer source;
        Buffer destination;
        DmaEnds(inst, &source, &destination);
        const int64_t bytes = inst.dma_bytes;
        if (source == Buffer::kHbm) c.hbm_read_bytes += bytes;
        if (source == Buffer::kSbuf) c.sbuf_read_bytes += bytes;
        if (destination == Buffer::kHbm) c.hbm_write_bytes += bytes;
        if (destination == Buffer::kSbuf) c.sbuf_write_bytes += bytes;
        // Traffic to internal `nl.hbm` tensors is the program's own spilling.
        if (inst.hbm_kind == HbmKind::kScratch) {
          if (destination == Buffer::kHbm) c.spill_save_bytes += bytes;
          if (source == Buffer::kHbm) c.spill_reload_bytes += bytes;
        }
        break;
      }
      default:  // DVE, Pool and eliminated instructions are not counted
        break;
    }
  }
  const MemoryTraffic& t = schedule.traffic;
  c.hbm_read_bytes += t.rematerialized_bytes + t.spill_reload_bytes;
  c.sbuf_write_bytes += t.rematerialized_bytes + t.spill_reload_bytes;
  c.spill_reload_bytes += t.spill_reload_bytes;
  c.hbm_write_bytes += t.spill_save_bytes;
  c.sbuf_read_bytes += t.spill_save_bytes;
  c.spill_save_bytes += t.spill_save_bytes;

  c.peak_flops_bandwidth_ratio = params.peak_flops_bandwidth_ratio;
  const int64_t hbm_bytes = c.hbm_read_bytes + c.hbm_write_bytes;
  if (hbm_bytes > 0) c.mm_arithmetic_intensity = (c.hardware_flops - c.transpose_flops) / hbm_bytes;
  if (latency_ns > 0) {
    const double peak_flops_per_ns = 2.0 * params.pe_array_dim * params.pe_array_dim * params.pe_clock_hz * 1e-9;
    c.hfu_estimated_percent = c.hardware_flops / (peak_flops_per_ns * latency_ns);
    c.scalar_engine_active_time_percent = schedule.busy.act_ns / latency_ns;
    c.vector_engine_active_time_percent = schedule.busy.dve_ns / latency_ns;
    c.gpsimd_engine_active_time_percent = schedule.busy.pool_ns / latency_ns;
  }
  return c;
}

}  // namespace accelopt::trainium

#include "services/profiler/trainium/cost_model.h"

#include <algorithm>
#include <cmath>

namespace accelopt::trainium {
namespace {

bool AnyInput(const Instruction& inst, Buffer buffer) {
  for (const Operand& operand : inst.inputs) {
    if (operand.buffer == buffer) return true;
  }
  return false;
}

double PeCycles(const Instruction& inst, const DeviceParams& params) {
  const double stationary = std::min(params.pe_min_stationary, static_cast<double>(inst.stationary_free));
  double cycles = std::max(stationary, static_cast<double>(inst.free_elems));
  if (inst.dtype_bytes >= 4) {
    cycles *= inst.op == Op::kTranspose ? params.pe_transpose_fp32_factor : params.pe_fp32_factor;
  }
  return cycles;
}

// Cycles of the vector-style ops (ACT, DVE, Pool) before the engine overhead, per the nki.isa cost
// formulas.
bool IsAddSubtractOrMultiply(Alu alu) { return alu == Alu::kAdd || alu == Alu::kSubtract || alu == Alu::kMultiply; }

// The API pages' estimated costs. tensor_tensor: N "if one input in PSUM, or bf16 add/mul/sub", else 2N.
// scalar_tensor_tensor (two operators): N when "data and operand1 are both bfloat16, op0=nl.subtract and
// op1=nl.multiply, and N is even", else 2N, in PSUM too. A trace without `alu` keeps the 16-bit rate.
double TensorTensorCyclesPerElement(const Instruction& inst, const DeviceParams& params) {
  const double slow = params.dve_tensor_tensor_cycles_per_elem;
  const bool sixteen_bit = inst.dtype_bytes <= 2;
  if (inst.alu.size() == 2) {
    const bool fast =
        sixteen_bit && inst.alu[0] == Alu::kSubtract && inst.alu[1] == Alu::kMultiply && inst.free_elems % 2 == 0;
    return fast ? 1.0 : slow;
  }
  if (AnyInput(inst, Buffer::kPsum)) return 1.0;
  if (sixteen_bit && (inst.alu.empty() || IsAddSubtractOrMultiply(inst.alu[0]))) return 1.0;
  return slow;
}

// tensor_reduce: "N (N/2 for bf16 add/max)" on the Vector Engine, by the elements it reads (the trace writes dt=2
// for a bfloat16 input only). A trace without `alu` keeps N.
double TensorReduceCycles(const Instruction& inst, Engine engine) {
  const double n = static_cast<double>(inst.free_elems);
  const bool add_or_max = !inst.alu.empty() && (inst.alu[0] == Alu::kAdd || inst.alu[0] == Alu::kMaximum);
  return engine == Engine::kDve && inst.dtype_bytes <= 2 && add_or_max ? n / 2 : n;
}

// The Vector Engine transposes blocks of at most 32 x 32 (the nc_transpose page: "Vector Engine can handle shape
// (32, 32) or smaller"). A larger Beta 1 tile (up to 128 x 128, accepted on the device) is taken as one block
// after another, each at the max(MIN_II, N) rate of its 32-element rows; one instruction overhead for all.
constexpr int64_t kVectorTransposeBlock = 32;

double VectorTransposeCycles(const Instruction& inst, double floor) {
  const int64_t rows = std::max<int64_t>(inst.partitions, 1);
  const int64_t columns = std::max<int64_t>(inst.free_elems, 1);
  const int64_t blocks = ((rows + kVectorTransposeBlock - 1) / kVectorTransposeBlock) *
                         ((columns + kVectorTransposeBlock - 1) / kVectorTransposeBlock);
  return static_cast<double>(blocks) * std::max(floor, static_cast<double>(std::min(columns, kVectorTransposeBlock)));
}

double VectorCycles(const Instruction& inst, Engine engine, const DeviceParams& params) {
  const double n = static_cast<double>(inst.free_elems);
  const double floor = params.min_instruction_cycles;
  switch (inst.op) {
    case Op::kTranspose:
      return VectorTransposeCycles(inst, floor);
    case Op::kTensorTensor:
    case Op::kLoopReduce:
      return std::max(floor, TensorTensorCyclesPerElement(inst, params) * n);
    case Op::kTensorReduce:
      return TensorReduceCycles(inst, engine);
    case Op::kReciprocal:
      return std::max(floor, params.reciprocal_cycles_per_elem * n);
    case Op::kScan:
      return std::max(floor, params.scan_cycles_per_elem * n);
    case Op::kBnAggr:
      return std::max(floor, params.bn_aggr_cycles_per_elem * n);
    case Op::kIota:
    case Op::kSelect:
      return params.pool_fixed_op_cycles + n;
    default:  // activation, tensor_scalar, copy, memset, bn_stats, and PE ops forced elsewhere
      return std::max(floor, n);
  }
}

}  // namespace

double EngineClockHz(Engine engine, const DeviceParams& params) {
  switch (engine) {
    case Engine::kPe:
      return params.pe_clock_hz;
    case Engine::kAct:
      return params.act_clock_hz;
    case Engine::kDve:
      return params.dve_clock_hz;
    case Engine::kPool:
      return params.pool_clock_hz;
    default:
      return params.dve_clock_hz;
  }
}

double InstructionCycles(const Instruction& inst, Engine engine, const DeviceParams& params) {
  double cycles = 0;
  switch (engine) {
    case Engine::kPe:
      cycles = PeCycles(inst, params);
      break;
    case Engine::kPool:
      cycles = VectorCycles(inst, engine, params);
      if (inst.op != Op::kIota && inst.op != Op::kSelect) cycles *= params.pool_cycles_per_elem;
      break;
    default:
      cycles = VectorCycles(inst, engine, params);
      break;
  }
  // activation_reduce and tensor_scalar_reduce: "max(MIN_II, N) + MIN_II" (the API pages); the other
  // instructions that reduce into the registers are taken to pay the same
  if (inst.reduces && engine != Engine::kPe) cycles += params.min_instruction_cycles;
  if (inst.dynamic_offset) cycles = std::max(cycles, params.dynamic_access_min_cycles);
  if (inst.stride > 16) cycles *= params.strided_access_factor;
  switch (engine) {
    case Engine::kPe:
      return cycles + (inst.dtype_bytes >= 4 ? params.pe_overhead_cycles : params.pe_single_pass_overhead_cycles);
    case Engine::kAct:
      return cycles + params.act_overhead_cycles;
    case Engine::kDve:
      return cycles + params.dve_overhead_cycles;
    case Engine::kPool:
      return cycles + params.pool_overhead_cycles;
    default:
      return cycles;
  }
}

double InstructionDurationNs(const Instruction& inst, Engine engine, const DeviceParams& params) {
  return InstructionCycles(inst, engine, params) / EngineClockHz(engine, params) * 1e9;
}

double DmaEfficiency(int64_t run_bytes, const DeviceParams& params) {
  const double run = static_cast<double>(std::max<int64_t>(run_bytes, 1));
  return run / (run + params.dma_descriptor_overhead_bytes);
}

DmaCost ComputeDmaCost(int partitions, int64_t bytes, int64_t run_bytes, int hbm_sides, const DeviceParams& params) {
  DmaCost cost;
  const int max_queues = static_cast<int>(params.dma_queues);
  const int per_queue = std::max(1, static_cast<int>(params.dma_partitions_per_queue));
  cost.queues = std::clamp((std::max(partitions, 1) + per_queue - 1) / per_queue, 1, max_queues);
  if (run_bytes <= 0) run_bytes = bytes / std::max(partitions, 1);
  const double per_queue_bytes = static_cast<double>(bytes) / cost.queues;
  double queue_rate = params.dma_queue_bytes_per_ns;
  if (hbm_sides > 0) queue_rate = std::min(queue_rate, params.hbm_bytes_per_ns / params.dma_queues / hbm_sides);
  cost.queue_busy_ns = per_queue_bytes / (queue_rate * DmaEfficiency(run_bytes, params)) + params.dma_queue_overhead_ns;
  return cost;
}

}  // namespace accelopt::trainium

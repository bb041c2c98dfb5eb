// In-memory form of an instruction trace (TRACE_FORMAT.md, version 1): the instructions a kernel
// issued, in program order, plus the live ranges of its on-chip allocations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace accelopt::trainium {

// Operation of one traced instruction (the `op` key).
enum class Op {
  kMatmul,
  kTranspose,
  kActivation,
  kTensorScalar,
  kTensorTensor,
  kTensorReduce,
  kReciprocal,
  kMemset,
  kCopy,
  kScan,
  kLoopReduce,
  kIota,
  kSelect,
  kBnStats,
  kBnAggr,
  kBroadcast,
  kLoad,
  kStore,
  kDmaCopy,
};

// Engines of a NeuronCore. kAuto is only valid as a request in a trace (`eng=auto`).
enum class Engine { kPe, kAct, kDve, kPool, kDma, kAuto };

// Memory an operand lives in.
enum class Buffer { kSbuf, kPsum, kHbm, kConst };

enum class DmaDirection { kNone, kLoad, kStore, kCopy };

// Which HBM tensor a DMA touches: a kernel input/output or an internal `nl.hbm` scratch tensor.
enum class HbmKind { kNone, kIo, kScratch };

// An ALU operator of a tensor_tensor, loop_reduce or tensor_reduce (the `alu` key); the Vector Engine's rate
// depends on it.
enum class Alu { kOther, kAdd, kSubtract, kMultiply, kMaximum };

// One operand of an instruction: the buffer and the bytes per partition actually accessed.
struct Operand {
  Buffer buffer = Buffer::kSbuf;
  int64_t bytes_pp = 0;
};

// One `I` record. Dependencies and allocation references are stored as indices into Trace vectors
// (not the raw ids of the file), so consumers never look ids up.
struct Instruction {
  int64_t id = 0;
  Op op = Op::kCopy;
  Engine engine = Engine::kAuto;
  int partitions = 1;
  int64_t free_elems = 0;       // `n`
  int64_t stationary_free = 0;  // `nstat`
  int dtype_bytes = 4;          // `dt`
  absl::InlinedVector<Operand, 3> inputs;
  bool has_output = false;
  Operand output;
  absl::InlinedVector<int32_t, 4> deps;          // indices into Trace::instructions, all smaller than own index
  absl::InlinedVector<int32_t, 3> read_allocs;   // indices into Trace::allocations
  absl::InlinedVector<int32_t, 2> write_allocs;  // indices into Trace::allocations
  bool accumulate = false;
  bool cse = false;
  bool dynamic_offset = false;  // `dyn`: an operand sits at an offset read from SBUF when it runs
  int line = 0;
  DmaDirection dma_direction = DmaDirection::kNone;
  int64_t dma_bytes = 0;
  int64_t dma_run = 0;
  HbmKind hbm_kind = HbmKind::kNone;
  int64_t stride = 0;
  int core = 0;  // NeuronCore of the SPMD program that issued it (`core`, default 0)
  // `alu`: the operators of a tensor_tensor, loop_reduce or tensor_reduce, two for a scalar_tensor_tensor; empty
  // when not traced
  absl::InlinedVector<Alu, 2> alu;
  // `red=1` or a second `out` operand (a reduce_res): the instruction also reduces its result along the free axes
  // into the accumulation registers (activation_reduce, tensor_scalar_reduce, a reduce_cmd, ...).
  bool reduces = false;
};

// One `A` record with its matching `F`. Positions are instruction indices: the allocation appeared
// just before instruction `alloc_at` and was freed just before instruction `free_at` (==
// instruction count when it was freed after the last instruction or never freed explicitly).
struct Allocation {
  int64_t id = 0;
  Buffer buffer = Buffer::kSbuf;
  int64_t bytes_pp = 0;
  int partitions = 0;
  int site = 0;
  // The tensor this allocation is a block of (`tensor`, the file id of its first block; the
  // allocation's own id when absent) and its flat block index (`blk`, default 0).
  int64_t tensor = 0;
  int32_t block = 0;
  int core = 0;  // NeuronCore whose SBUF/PSUM holds it
  int32_t alloc_at = 0;
  int32_t free_at = 0;
};

// A whole parsed trace. Immutable after parsing.
struct Trace {
  std::string kernel;
  bool timing_only = false;
  std::vector<Instruction> instructions;
  std::vector<Allocation> allocations;
};

// Most NeuronCores one trace may spread its programs over (`core` keys).
inline constexpr int kMaxCores = 8;

// Number of cores a trace uses: 1 + the largest `core` of its instructions and allocations.
int CoreCount(const Trace& trace);

// True for the ops that run on the DMA queues (load, store, dma_copy).
bool IsDmaOp(Op op);
// True for the ops that run on the PE array (matmul, transpose, broadcast).
bool IsPeOp(Op op);

}  // namespace accelopt::trainium

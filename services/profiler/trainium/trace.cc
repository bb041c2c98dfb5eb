#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

absl::string_view OpName(Op op) {
  switch (op) {
    case Op::kMatmul:
      return "matmul";
    case Op::kTranspose:
      return "transpose";
    case Op::kActivation:
      return "activation";
    case Op::kTensorScalar:
      return "tensor_scalar";
    case Op::kTensorTensor:
      return "tensor_tensor";
    case Op::kTensorReduce:
      return "tensor_reduce";
    case Op::kReciprocal:
      return "reciprocal";
    case Op::kMemset:
      return "memset";
    case Op::kCopy:
      return "copy";
    case Op::kScan:
      return "scan";
    case Op::kLoopReduce:
      return "loop_reduce";
    case Op::kIota:
      return "iota";
    case Op::kSelect:
      return "select";
    case Op::kBnStats:
      return "bn_stats";
    case Op::kBnAggr:
      return "bn_aggr";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kLoad:
      return "load";
    case Op::kStore:
      return "store";
    case Op::kDmaCopy:
      return "dma_copy";
  }
  return "unknown";
}

absl::string_view EngineName(Engine engine) {
  switch (engine) {
    case Engine::kPe:
      return "pe";
    case Engine::kAct:
      return "act";
    case Engine::kDve:
      return "dve";
    case Engine::kPool:
      return "pool";
    case Engine::kDma:
      return "dma";
    case Engine::kAuto:
      return "auto";
  }
  return "unknown";
}

absl::string_view BufferName(Buffer buffer) {
  switch (buffer) {
    case Buffer::kSbuf:
      return "sbuf";
    case Buffer::kPsum:
      return "psum";
    case Buffer::kHbm:
      return "hbm";
    case Buffer::kConst:
      return "const";
  }
  return "unknown";
}

bool IsDmaOp(Op op) { return op == Op::kLoad || op == Op::kStore || op == Op::kDmaCopy; }

bool IsPeOp(Op op) { return op == Op::kMatmul || op == Op::kTranspose || op == Op::kBroadcast; }

}  // namespace accelopt::trainium

#include "services/profiler/trainium/trace.h"

#include <algorithm>

namespace accelopt::trainium {

int CoreCount(const Trace& trace) {
  int cores = 1;
  for (const Instruction& inst : trace.instructions) cores = std::max(cores, inst.core + 1);
  for (const Allocation& alloc : trace.allocations) cores = std::max(cores, alloc.core + 1);
  return cores;
}

bool IsDmaOp(Op op) { return op == Op::kLoad || op == Op::kStore || op == Op::kDmaCopy; }

bool IsPeOp(Op op) { return op == Op::kMatmul || op == Op::kTranspose || op == Op::kBroadcast; }

}  // namespace accelopt::trainium

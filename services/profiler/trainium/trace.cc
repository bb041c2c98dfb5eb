#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

bool IsDmaOp(Op op) { return op == Op::kLoad || op == Op::kStore || op == Op::kDmaCopy; }

bool IsPeOp(Op op) { return op == Op::kMatmul || op == Op::kTranspose || op == Op::kBroadcast; }

}  // namespace accelopt::trainium

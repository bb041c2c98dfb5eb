#include "services/profiler/trainium/engine_assignment.h"

namespace accelopt::trainium {

absl::InlinedVector<Engine, 2> CandidateEngines(const Instruction& inst) {
  if (IsDmaOp(inst.op)) return {Engine::kDma};
  // nc_transpose(engine=vector): a transpose the front end put on the Vector Engine stays there
  if (inst.op == Op::kTranspose && inst.engine == Engine::kDve) return {Engine::kDve};
  if (IsPeOp(inst.op)) return {Engine::kPe};
  if (inst.engine != Engine::kAuto && inst.engine != Engine::kDma) return {inst.engine};
  switch (inst.op) {
    case Op::kActivation:
      return {Engine::kAct};
    case Op::kCopy:
      for (const Operand& operand : inst.inputs) {
        if (operand.buffer == Buffer::kPsum) return {Engine::kAct};
      }
      return {Engine::kAct, Engine::kDve};
    case Op::kTensorScalar:
      return {Engine::kAct, Engine::kDve};
    case Op::kMemset:
      return {Engine::kDve, Engine::kPool};
    case Op::kIota:
    case Op::kSelect:
      return {Engine::kPool};
    default:
      return {Engine::kDve};
  }
}

}  // namespace accelopt::trainium

#include "services/profiler/trainium/engine_assignment.h"

#include "gtest/gtest.h"

namespace accelopt::trainium {
namespace {

Instruction Make(Op op, Engine engine) {
  Instruction inst;
  inst.op = op;
  inst.engine = engine;
  return inst;
}

TEST(EngineAssignmentTest, ATransposeRunsOnTheEngineTheFrontEndChose) {
  // nc_transpose(engine=vector) is traced `eng=dve`; before, every transpose was timed on the Tensor Engine
  EXPECT_EQ(CandidateEngines(Make(Op::kTranspose, Engine::kDve)), (absl::InlinedVector<Engine, 2>{Engine::kDve}));
  EXPECT_EQ(CandidateEngines(Make(Op::kTranspose, Engine::kPe)), (absl::InlinedVector<Engine, 2>{Engine::kPe}));
  EXPECT_EQ(CandidateEngines(Make(Op::kTranspose, Engine::kAuto)), (absl::InlinedVector<Engine, 2>{Engine::kPe}));
  EXPECT_EQ(CandidateEngines(Make(Op::kMatmul, Engine::kDve)), (absl::InlinedVector<Engine, 2>{Engine::kPe}));
}

TEST(EngineAssignmentTest, AnUnpinnedCopyMayRunOnEitherVectorStyleEngine) {
  EXPECT_EQ(CandidateEngines(Make(Op::kCopy, Engine::kAuto)),
            (absl::InlinedVector<Engine, 2>{Engine::kAct, Engine::kDve}));
  EXPECT_EQ(CandidateEngines(Make(Op::kCopy, Engine::kDve)), (absl::InlinedVector<Engine, 2>{Engine::kDve}));
}

}  // namespace
}  // namespace accelopt::trainium

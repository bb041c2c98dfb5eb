#include "services/profiler/trainium/cost_model.h"

#include <vector>

#include "gtest/gtest.h"
#include "services/profiler/trainium/test_util.h"

namespace accelopt::trainium {
namespace {

Instruction Make(Op op, int64_t n, int64_t nstat = 0, int dt = 4) {
  Instruction inst;
  inst.op = op;
  inst.partitions = 128;
  inst.free_elems = n;
  inst.stationary_free = nstat;
  inst.dtype_bytes = dt;
  return inst;
}

TEST(CostModelTest, MatmulFollowsTheNcMatmulFormula) {
  DeviceParams p = SimpleDeviceForTest();
  p.pe_overhead_cycles = 10;
  // fp32: 4 * max(min(64, 128), 512) + overhead.
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kMatmul, 512, 128), Engine::kPe, p), 4 * 512 + 10);
  // Small moving size: the stationary term min(64, N_stat) dominates.
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kMatmul, 16, 128), Engine::kPe, p), 4 * 64 + 10);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kMatmul, 16, 32), Engine::kPe, p), 4 * 32 + 10);
  // bf16 has no fp32 factor, and its own (one-pass) overhead.
  p.pe_single_pass_overhead_cycles = 3;
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kMatmul, 512, 128, 2), Engine::kPe, p), 512 + 3);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kMatmul, 16, 128, 2), Engine::kPe, p), 64 + 3);
  // Transposes use their own fp32 factor.
  p.pe_transpose_fp32_factor = 2;
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kTranspose, 128, 128), Engine::kPe, p), 2 * 128 + 10);
}

// A Vector Engine transpose: 32 x 32 blocks, each at max(64, N); a [128, 128] tile (Beta 1) is 16 of them. On a
// trn2 a [128, 128] fp32 one took about 1.6 us (1536 Vector Engine cycles; docs/simulator.md, round 50a).
TEST(CostModelTest, AVectorEngineTransposeTakesItsTileIn32By32Blocks) {
  DeviceParams p = SimpleDeviceForTest();
  p.dve_overhead_cycles = 100;
  Instruction small = Make(Op::kTranspose, 32);
  small.partitions = 32;
  EXPECT_DOUBLE_EQ(InstructionCycles(small, Engine::kDve, p), 64 + 100);
  small.partitions = 8;
  small.free_elems = 20;
  EXPECT_DOUBLE_EQ(InstructionCycles(small, Engine::kDve, p), 64 + 100);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kTranspose, 128), Engine::kDve, p), 16 * 64 + 100);
  Instruction wide = Make(Op::kTranspose, 100);
  wide.partitions = 64;
  EXPECT_DOUBLE_EQ(InstructionCycles(wide, Engine::kDve, p), 2 * 4 * 64 + 100);
}

TEST(CostModelTest, VectorOpsFollowTheIsaFormulas) {
  DeviceParams p = SimpleDeviceForTest();
  p.act_overhead_cycles = 50;
  p.dve_overhead_cycles = 100;
  p.reciprocal_cycles_per_elem = 3;
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kActivation, 512), Engine::kAct, p), 512 + 50);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kActivation, 1), Engine::kAct, p),
                   64 + 50);  // max(64, N)
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kTensorScalar, 512), Engine::kDve, p), 512 + 100);

  Instruction tt = Make(Op::kTensorTensor, 512);
  tt.inputs = {{Buffer::kSbuf, 2048}, {Buffer::kSbuf, 2048}};
  EXPECT_DOUBLE_EQ(InstructionCycles(tt, Engine::kDve, p), 2 * 512 + 100);
  tt.inputs[1].buffer = Buffer::kPsum;  // one input in PSUM: one element per cycle
  EXPECT_DOUBLE_EQ(InstructionCycles(tt, Engine::kDve, p), 512 + 100);

  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kReciprocal, 512), Engine::kDve, p), 3 * 512 + 100);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kScan, 512), Engine::kDve, p), 2 * 512 + 100);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kTensorReduce, 512), Engine::kDve, p), 512 + 100);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kIota, 100), Engine::kPool, p), 150 + 100);

  Instruction strided = Make(Op::kActivation, 512);
  strided.stride = 32;
  EXPECT_DOUBLE_EQ(InstructionCycles(strided, Engine::kAct, p), 2 * 512 + 50);

  // A dynamic-offset copy: max(MIN_II_DYNAMIC, N) instead of max(64, N).
  p.dynamic_access_min_cycles = 600;
  Instruction dynamic = Make(Op::kCopy, 128);
  dynamic.dynamic_offset = true;
  EXPECT_DOUBLE_EQ(InstructionCycles(dynamic, Engine::kDve, p), 600 + 100);
  dynamic.free_elems = 1024;
  EXPECT_DOUBLE_EQ(InstructionCycles(dynamic, Engine::kDve, p), 1024 + 100);
  EXPECT_DOUBLE_EQ(InstructionCycles(Make(Op::kCopy, 128), Engine::kDve, p), 128 + 100);
}

// tensor_tensor and scalar_tensor_tensor (`alu` with two operators): the API pages' rates per operator, dtype and
// buffer. Before, every 16-bit or PSUM-input tensor_tensor line, scalar_tensor_tensor included, ran at N.
TEST(CostModelTest, TheVectorEnginesOneElementPerCycleRateNeedsTheDocumentedOperators) {
  DeviceParams p = SimpleDeviceForTest();
  p.dve_overhead_cycles = 0;
  auto tt = [&p](std::vector<Alu> alu, int dt, Buffer second = Buffer::kSbuf, int64_t n = 512) {
    Instruction inst = Make(Op::kTensorTensor, n, 0, dt);
    inst.inputs = {{Buffer::kSbuf, n * dt}, {second, n * dt}};
    inst.alu.assign(alu.begin(), alu.end());
    return InstructionCycles(inst, Engine::kDve, p);
  };
  // tensor_tensor: 16-bit add, subtract, multiply at N; divide, maximum and the others at 2N; fp32 at 2N
  EXPECT_DOUBLE_EQ(tt({Alu::kAdd}, 2), 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kSubtract}, 2), 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kMultiply}, 2), 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kOther}, 2), 2 * 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kMultiply}, 4), 2 * 512);
  // an input in PSUM: N for any operator
  EXPECT_DOUBLE_EQ(tt({Alu::kOther}, 4, Buffer::kPsum), 512);
  // scalar_tensor_tensor: N only for 16-bit subtract then multiply with N even, never for PSUM alone
  EXPECT_DOUBLE_EQ(tt({Alu::kSubtract, Alu::kMultiply}, 2), 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kSubtract, Alu::kMultiply}, 2, Buffer::kSbuf, 511), 2 * 511);
  EXPECT_DOUBLE_EQ(tt({Alu::kMultiply, Alu::kAdd}, 2), 2 * 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kSubtract, Alu::kMultiply}, 4), 2 * 512);
  EXPECT_DOUBLE_EQ(tt({Alu::kMultiply, Alu::kAdd}, 4, Buffer::kPsum), 2 * 512);
  // a trace without `alu` keeps the 16-bit rate
  EXPECT_DOUBLE_EQ(tt({}, 2), 512);
}

// tensor_reduce: N, or N/2 for a 16-bit add or maximum on the Vector Engine (by the elements it reads).
TEST(CostModelTest, ASixteenBitAddOrMaxReductionReadsTwoElementsPerCycle) {
  DeviceParams p = SimpleDeviceForTest();
  p.pool_cycles_per_elem = 1;
  auto reduce = [&p](std::vector<Alu> alu, int dt, Engine engine = Engine::kDve) {
    Instruction inst = Make(Op::kTensorReduce, 512, 0, dt);
    inst.alu.assign(alu.begin(), alu.end());
    return InstructionCycles(inst, engine, p);
  };
  EXPECT_DOUBLE_EQ(reduce({Alu::kAdd}, 2), 256);
  EXPECT_DOUBLE_EQ(reduce({Alu::kMaximum}, 2), 256);
  EXPECT_DOUBLE_EQ(reduce({Alu::kMultiply}, 2), 512);
  EXPECT_DOUBLE_EQ(reduce({Alu::kOther}, 2), 512);
  EXPECT_DOUBLE_EQ(reduce({Alu::kAdd}, 4), 512);
  EXPECT_DOUBLE_EQ(reduce({}, 2), 512);                          // a trace without `alu`
  EXPECT_DOUBLE_EQ(reduce({Alu::kAdd}, 2, Engine::kPool), 512);  // a partition reduction on GpSimd
}

// activation_reduce and tensor_scalar_reduce: "max(MIN_II, N) + MIN_II" (a reduce_res is a second output).
TEST(CostModelTest, AReductionIntoAReduceResCostsOneMoreMinimumInterval) {
  DeviceParams p = SimpleDeviceForTest();
  Instruction act = Make(Op::kActivation, 512);
  Instruction scalar = Make(Op::kTensorScalar, 16);
  EXPECT_DOUBLE_EQ(InstructionCycles(act, Engine::kAct, p), 512);
  EXPECT_DOUBLE_EQ(InstructionCycles(scalar, Engine::kDve, p), 64);
  act.reduces = true;
  scalar.reduces = true;
  EXPECT_DOUBLE_EQ(InstructionCycles(act, Engine::kAct, p), 512 + 64);
  EXPECT_DOUBLE_EQ(InstructionCycles(scalar, Engine::kDve, p), 64 + 64);
}

TEST(CostModelTest, DurationUsesTheEngineClock) {
  absl::StatusOr<DeviceParams> trn1 = BuiltinDeviceParams("trn1");
  ASSERT_TRUE(trn1.ok());
  const Instruction mm = Make(Op::kMatmul, 512, 128);
  EXPECT_NEAR(InstructionDurationNs(mm, Engine::kPe, *trn1), (4 * 512 + trn1->pe_overhead_cycles) / 2.8, 1e-9);
  const Instruction act = Make(Op::kActivation, 512);
  EXPECT_NEAR(InstructionDurationNs(act, Engine::kAct, *trn1), (512 + trn1->act_overhead_cycles) / 1.4, 1e-9);
}

TEST(CostModelTest, DmaEfficiencyGrowsWithRunLength) {
  DeviceParams p = SimpleDeviceForTest();
  p.dma_descriptor_overhead_bytes = 140;
  EXPECT_NEAR(DmaEfficiency(140, p), 0.5, 1e-12);
  EXPECT_NEAR(DmaEfficiency(4096, p), 4096.0 / 4236.0, 1e-12);
  double previous = 0;
  for (int64_t run : {16, 64, 256, 512, 2048, 4096, 65536}) {
    const double eff = DmaEfficiency(run, p);
    EXPECT_GT(eff, previous);
    EXPECT_LT(eff, 1.0);
    previous = eff;
  }
  // trn1 queues at 4 KiB runs reach about the measured 263 GB/s per core.
  absl::StatusOr<DeviceParams> trn1 = BuiltinDeviceParams("trn1");
  ASSERT_TRUE(trn1.ok());
  const double core_gbps = 16 * trn1->dma_queue_bytes_per_ns * DmaEfficiency(4096, *trn1);
  EXPECT_GT(core_gbps, 240);
  EXPECT_LT(core_gbps, 272);
}

TEST(CostModelTest, DmaSplitsOverQueuesByPartitions) {
  DeviceParams p = SimpleDeviceForTest();
  const DmaCost full = ComputeDmaCost(128, 128 * 4096, 4096, 1, p);
  EXPECT_EQ(full.queues, 16);
  EXPECT_DOUBLE_EQ(full.queue_busy_ns, 128 * 4096 / 16.0);  // 1 B/ns per queue, no overhead
  const DmaCost half = ComputeDmaCost(64, 64 * 4096, 4096, 0, p);
  EXPECT_EQ(half.queues, 8);
  EXPECT_DOUBLE_EQ(half.queue_busy_ns, 64 * 4096 / 8.0);
  // A small HBM share caps every queue at share / queues.
  p.hbm_bytes_per_ns = 8;
  EXPECT_DOUBLE_EQ(ComputeDmaCost(64, 64 * 4096, 4096, 1, p).queue_busy_ns, 64 * 4096 / 8.0 / 0.5);
  EXPECT_DOUBLE_EQ(ComputeDmaCost(64, 64 * 4096, 4096, 0, p).queue_busy_ns, 64 * 4096 / 8.0);
  // An HBM-to-HBM copy reads and writes every byte in HBM: twice the share per byte.
  EXPECT_DOUBLE_EQ(ComputeDmaCost(64, 64 * 4096, 4096, 2, p).queue_busy_ns, 64 * 4096 / 8.0 / 0.25);
  p.hbm_bytes_per_ns = 1e6;
  EXPECT_EQ(ComputeDmaCost(1, 512, 512, 1, p).queues, 1);
  // Short runs cost more for the same bytes.
  p.dma_descriptor_overhead_bytes = 140;
  EXPECT_GT(ComputeDmaCost(128, 1 << 20, 64, 1, p).queue_busy_ns,
            ComputeDmaCost(128, 1 << 20, 4096, 1, p).queue_busy_ns);
}

}  // namespace
}  // namespace accelopt::trainium

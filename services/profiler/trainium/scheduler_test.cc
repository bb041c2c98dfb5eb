#include "services/profiler/trainium/scheduler.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/profiler/trainium/test_util.h"

namespace accelopt::trainium {
namespace {

// With SimpleDeviceForTest every compute cycle is 1 ns and overheads are zero.
TEST(SchedulerTest, IndependentInstructionsOnDifferentEnginesOverlap) {
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=1 op=tensor_tensor eng=dve p=128 n=1000 in=psum:4000,sbuf:4000 out=sbuf:4000\n");
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_DOUBLE_EQ(s.instructions[0].start_ns, 0);
  EXPECT_DOUBLE_EQ(s.instructions[1].start_ns, 0);
  EXPECT_DOUBLE_EQ(s.makespan_ns, 1000);
  EXPECT_DOUBLE_EQ(s.busy.act_ns, 1000);
  EXPECT_DOUBLE_EQ(s.busy.dve_ns, 1000);
}

TEST(SchedulerTest, ProgramsOnTwoCoresUseTheirOwnEnginesAndMemory) {
  // Two programs each filling all 8 PSUM banks and running 1000 ns on ACT: on one core they
  // serialize, on two cores (core=1) they overlap; busy time is reported per core on average.
  std::string one_core;
  std::string two_cores;
  for (int program = 0; program < 2; ++program) {
    const std::string core = program == 1 ? " core=1" : "";
    const int id = program;
    const std::string alloc = absl::StrCat("A id=", id, " buf=psum bytes_pp=16384 parts=128 site=", 10 + program);
    const std::string inst =
        absl::StrCat("I id=", id, " op=activation eng=act p=128 n=1000 in=sbuf:4000 out=psum:4000 wa=", id);
    one_core += alloc + "\n" + inst + "\n";
    two_cores += alloc + core + "\n" + inst + core + "\n";
  }
  const Schedule serial = ScheduleTrace(ParseTraceForTest(one_core), SimpleDeviceForTest());
  const Schedule parallel = ScheduleTrace(ParseTraceForTest(two_cores), SimpleDeviceForTest());
  EXPECT_DOUBLE_EQ(serial.makespan_ns, 2000);
  EXPECT_DOUBLE_EQ(parallel.makespan_ns, 1000);
  EXPECT_EQ(parallel.cores, 2);
  EXPECT_DOUBLE_EQ(parallel.busy.act_ns, 1000);
}

TEST(SchedulerTest, VectorAndGpSimdShareTheSbufPortOnTrn1) {
  // trn1: VectorE and GpSimd cannot access SBUF at the same time, so independent SBUF work split
  // between them takes as long as on one of them; trn2 lifts the restriction.
  const Trace trace = ParseTraceForTest(
      "I id=0 op=tensor_tensor eng=dve p=128 n=500 in=sbuf:2000,sbuf:2000 out=sbuf:2000\n"
      "I id=1 op=tensor_tensor eng=pool p=128 n=500 in=sbuf:2000,sbuf:2000 out=sbuf:2000\n"
      "I id=2 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n");
  DeviceParams p = SimpleDeviceForTest();
  ASSERT_EQ(p.dve_pool_shared_sbuf_port, 1);
  const Schedule shared = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(shared.instructions[1].start_ns, shared.instructions[0].end_ns);
  EXPECT_DOUBLE_EQ(shared.instructions[2].start_ns, 0);  // ScalarE is not on that port
  EXPECT_DOUBLE_EQ(shared.makespan_ns, 2000);
  p.dve_pool_shared_sbuf_port = 0;
  const Schedule lifted = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(lifted.instructions[1].start_ns, 0);
  EXPECT_DOUBLE_EQ(lifted.makespan_ns, 1000);
}

TEST(SchedulerTest, TheSharedSbufPortIsFilledInItsIdleGaps) {
  // trn1: GpSimd's id 1 waits for ACT and takes the port over [2000, 4000) (two SBUF inputs: 2 cycles per
  // element); VectorE's independent id 2 uses the port while it is idle before that, not after it.
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=2000 in=sbuf:8000 out=sbuf:8000\n"
      "I id=1 op=tensor_tensor eng=pool p=128 n=1000 in=sbuf:4000,sbuf:4000 out=sbuf:4000 dep=0\n"
      "I id=2 op=tensor_tensor eng=dve p=128 n=500 in=sbuf:2000,sbuf:2000 out=sbuf:2000\n"
      "I id=3 op=tensor_tensor eng=dve p=128 n=750 in=sbuf:3000,sbuf:3000 out=sbuf:3000\n");
  const DeviceParams p = SimpleDeviceForTest();
  ASSERT_EQ(p.dve_pool_shared_sbuf_port, 1);
  const Schedule s = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(s.instructions[1].start_ns, 2000);
  EXPECT_DOUBLE_EQ(s.instructions[2].start_ns, 0);
  EXPECT_DOUBLE_EQ(s.instructions[3].start_ns, 4000);  // 1500 ns: the port's gap [1000, 2000) is too short
}

TEST(SchedulerTest, OneEngineIssuesInOrder) {
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=1 op=activation eng=act p=128 n=500 in=sbuf:2000 out=sbuf:2000\n");
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_DOUBLE_EQ(s.instructions[1].start_ns, 1000);
  EXPECT_DOUBLE_EQ(s.makespan_ns, 1500);
}

TEST(SchedulerTest, AnInstructionReadyEarlyRunsInAGapItsEngineLeft) {
  // ACT: id 0, then id 2 waits for VectorE's id 1; id 3 (another loop iteration's work, independent)
  // runs in the gap between them, as the compiler schedules unrolled affine_range iterations. (Two
  // SBUF inputs: VectorE takes 2 cycles per element on trn1.)
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=1 op=tensor_tensor eng=dve p=128 n=500 in=sbuf:2000,sbuf:2000 out=sbuf:2000 dep=0\n"
      "I id=2 op=activation eng=act p=128 n=2000 in=sbuf:8000 out=sbuf:8000 dep=1\n"
      "I id=3 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=4 op=activation eng=act p=128 n=1500 in=sbuf:6000 out=sbuf:6000\n");
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_DOUBLE_EQ(s.instructions[2].start_ns, 2000);
  EXPECT_DOUBLE_EQ(s.instructions[3].start_ns, 1000);  // fits the gap [1000, 2000)
  EXPECT_DOUBLE_EQ(s.instructions[4].start_ns, 4000);  // does not fit it: after id 2
  EXPECT_DOUBLE_EQ(s.makespan_ns, 5500);
  EXPECT_DOUBLE_EQ(s.busy.act_ns, 5500);
}

TEST(SchedulerTest, DependenciesSerializeWithSemaphoreLatencyAcrossEngines) {
  DeviceParams p = SimpleDeviceForTest();
  p.sync_latency_ns = 50;
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=1 op=tensor_tensor eng=dve p=128 n=1000 in=psum:4000,sbuf:4000 out=sbuf:4000 dep=0\n"
      "I id=2 op=tensor_tensor eng=dve p=128 n=1000 in=psum:4000,sbuf:4000 out=sbuf:4000 dep=1\n");
  const Schedule s = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(s.instructions[1].start_ns, 1050);  // other engine: + sync latency
  EXPECT_DOUBLE_EQ(s.instructions[2].start_ns, 2050);  // same engine: no semaphore
  EXPECT_DOUBLE_EQ(s.makespan_ns, 3050);
}

TEST(SchedulerTest, CseInstructionsCostNothing) {
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=1 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000 dep=0 cse=1\n"
      "I id=2 op=activation eng=act p=128 n=1000 in=sbuf:4000 out=sbuf:4000 dep=1\n");
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_EQ(s.instructions[1].engine, Engine::kAuto);
  EXPECT_DOUBLE_EQ(s.instructions[1].end_ns - s.instructions[1].start_ns, 0);
  EXPECT_DOUBLE_EQ(s.instructions[2].start_ns, 1000);
  EXPECT_DOUBLE_EQ(s.busy.act_ns, 2000);
  EXPECT_EQ(s.eliminated_instructions, 1);
}

TEST(SchedulerTest, AutoOpsGoWhereTheyFinishFirstAndEvictionsGoToAct) {
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=auto p=128 n=1000 in=sbuf:4000 out=sbuf:4000\n"
      "I id=1 op=tensor_scalar eng=auto p=128 n=100 in=sbuf:400 out=sbuf:400\n"
      "I id=2 op=copy eng=auto p=128 n=100 in=psum:400 out=sbuf:400\n"
      "I id=3 op=tensor_tensor eng=auto p=128 n=100 in=sbuf:400,sbuf:400 out=sbuf:400\n");
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_EQ(s.instructions[0].engine, Engine::kAct);
  EXPECT_EQ(s.instructions[1].engine, Engine::kDve);  // ACT is busy until 1000
  EXPECT_EQ(s.instructions[2].engine, Engine::kAct);  // PSUM eviction
  EXPECT_EQ(s.instructions[3].engine, Engine::kDve);
}

TEST(SchedulerTest, ActOutputsReadByDveBinaryOpsAreStagedInPsum) {
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=auto p=128 n=512 in=sbuf:2048 out=sbuf:2048\n"
      "I id=1 op=tensor_tensor eng=auto p=128 n=512 in=sbuf:2048,sbuf:2048 out=sbuf:2048 dep=0\n"
      "I id=2 op=activation eng=auto p=128 n=512 in=sbuf:2048 out=sbuf:2048\n");
  DeviceParams p = SimpleDeviceForTest();
  const Schedule off = ScheduleTrace(trace, p);
  EXPECT_FALSE(off.instructions[0].output_to_psum);
  EXPECT_DOUBLE_EQ(off.instructions[1].end_ns - off.instructions[1].start_ns, 2 * 512);
  p.act_outputs_to_psum_for_dve = 1;
  const Schedule on = ScheduleTrace(trace, p);
  EXPECT_TRUE(on.instructions[0].output_to_psum);
  EXPECT_FALSE(on.instructions[2].output_to_psum);  // no DVE reader
  EXPECT_DOUBLE_EQ(on.instructions[1].end_ns - on.instructions[1].start_ns, 512);
}

TEST(SchedulerTest, PartitionBroadcastsThatFitABankStayInPsum) {
  // TensorE writes only to PSUM: a DVE binary op reading a broadcast of at most one bank runs at one
  // element per cycle; a larger broadcast is evacuated to SBUF and read at the SBUF rate.
  const Trace trace = ParseTraceForTest(
      "I id=0 op=broadcast eng=pe p=128 n=512 in=sbuf:2048 out=sbuf:2048\n"
      "I id=1 op=tensor_tensor eng=auto p=128 n=512 in=sbuf:2048,sbuf:2048 out=sbuf:2048 dep=0\n"
      "I id=2 op=broadcast eng=pe p=128 n=1024 in=sbuf:4096 out=sbuf:4096\n"
      "I id=3 op=tensor_tensor eng=auto p=128 n=1024 in=sbuf:4096,sbuf:4096 out=sbuf:4096 dep=2\n");
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_TRUE(s.instructions[0].output_to_psum);
  EXPECT_DOUBLE_EQ(s.instructions[1].end_ns - s.instructions[1].start_ns, 512);
  EXPECT_FALSE(s.instructions[2].output_to_psum);
  EXPECT_DOUBLE_EQ(s.instructions[3].end_ns - s.instructions[3].start_ns, 2 * 1024);
}

// Eight matmul groups fill the PSUM banks; a ninth waits until the first group's eviction has
// finished.
std::string PsumPressureTrace() {
  std::string body;
  for (int k = 0; k < 8; ++k) {
    absl::StrAppend(&body, "A id=", k, " buf=psum bytes_pp=2048 parts=128 site=3\n", "I id=", k,
                    " op=matmul eng=pe p=128 n=512 nstat=128 in=sbuf:512,sbuf:2048 out=psum:2048 wa=", k, "\n");
  }
  absl::StrAppend(&body, "I id=8 op=copy eng=act p=128 n=20000 in=psum:2048 out=sbuf:2048 dep=0 ra=0\n", "F id=0\n",
                  "A id=8 buf=psum bytes_pp=2048 parts=128 site=3\n",
                  "I id=9 op=matmul eng=pe p=128 n=512 nstat=128 in=sbuf:512,sbuf:2048 out=psum:2048 wa=8\n");
  return body;
}

TEST(SchedulerTest, PsumBankLimitDelaysTheNinthGroup) {
  const Trace trace = ParseTraceForTest(PsumPressureTrace());
  DeviceParams p = SimpleDeviceForTest();
  const Schedule limited = ScheduleTrace(trace, p);
  // Matmul k ends at 2048 (k + 1); the eviction of group 0 runs 2048 .. 22048.
  EXPECT_DOUBLE_EQ(limited.instructions[8].end_ns, 22048);
  EXPECT_DOUBLE_EQ(limited.instructions[9].start_ns, 22048);
  EXPECT_EQ(limited.psum_bank_overflows, 0);

  p.psum_banks = 9;
  const Schedule roomy = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(roomy.instructions[9].start_ns, 8 * 2048);
}

// A loop of load -> activation -> store whose tiles come from two declaration sites.
std::string PipelineTrace(int iterations) {
  std::string body;
  for (int k = 0; k < iterations; ++k) {
    const int in = 2 * k;
    const int out = 2 * k + 1;
    absl::StrAppend(&body, "A id=", in, " buf=sbuf bytes_pp=4096 parts=128 site=10\n",  //
                    "I id=", 3 * k, " op=load eng=dma p=128 n=1024 in=hbm:4096 out=sbuf:4096 wa=", in,
                    " dir=load bytes=524288 run=4096 hbm=io\n",  //
                    "A id=", out, " buf=sbuf bytes_pp=4096 parts=128 site=11\n", "I id=", 3 * k + 1,
                    " op=activation eng=act p=128 n=1024 in=sbuf:4096 out=sbuf:4096 dep=", 3 * k, " ra=", in,
                    " wa=", out, "\n",  //
                    "F id=", in, "\n",  //
                    "I id=", 3 * k + 2, " op=store eng=dma p=128 n=1024 in=sbuf:4096 out=hbm:4096 dep=", 3 * k + 1,
                    " ra=", out, " dir=store bytes=524288 run=4096 hbm=io\n",  //
                    "F id=", out, "\n");
  }
  return body;
}

TEST(SchedulerTest, RingBuffersLimitPipelining) {
  const Trace trace = ParseTraceForTest(PipelineTrace(8));
  DeviceParams p = SimpleDeviceForTest();
  p.dma_queue_bytes_per_ns = 64;  // 512 KiB over 16 queues: 512 ns per DMA
  p.sbuf_ring_depth = 1;
  const Schedule single = ScheduleTrace(trace, p);
  p.sbuf_ring_depth = 3;
  const Schedule triple = ScheduleTrace(trace, p);
  EXPECT_EQ(single.sbuf_ring_depth, 1);
  EXPECT_EQ(triple.sbuf_ring_depth, 3);
  EXPECT_GT(single.makespan_ns, triple.makespan_ns);
  // With one buffer per site, load k+1 cannot start before activation k (the last reader of tile k)
  // ends.
  EXPECT_GE(single.instructions[3].start_ns, single.instructions[1].end_ns);
}

TEST(SchedulerTest, DmaQueuesAreSharedByPartitions) {
  DeviceParams p = SimpleDeviceForTest();
  const Trace full = ParseTraceForTest(
      "I id=0 op=load eng=dma p=128 n=1024 in=hbm:4096 out=sbuf:4096 dir=load bytes=524288 "
      "run=4096 hbm=io\n"
      "I id=1 op=load eng=dma p=128 n=1024 in=hbm:4096 out=sbuf:4096 dir=load bytes=524288 "
      "run=4096 hbm=io\n");
  const Schedule s1 = ScheduleTrace(full, p);
  EXPECT_DOUBLE_EQ(s1.makespan_ns, 2 * 524288 / 16.0);  // both need all 16 queues
  const Trace halves = ParseTraceForTest(
      "I id=0 op=load eng=dma p=64 n=1024 in=hbm:4096 out=sbuf:4096 dir=load bytes=262144 run=4096 "
      "hbm=io\n"
      "I id=1 op=load eng=dma p=64 n=1024 in=hbm:4096 out=sbuf:4096 dir=load bytes=262144 run=4096 "
      "hbm=io\n");
  const Schedule s2 = ScheduleTrace(halves, p);
  EXPECT_DOUBLE_EQ(s2.makespan_ns, 262144 / 8.0);  // 8 queues each, side by side
  EXPECT_DOUBLE_EQ(s2.busy.dma_ns, 262144 / 8.0);  // union of the queues' busy time

  // The HBM share binds when it is below the queues' total bandwidth.
  p.hbm_bytes_per_ns = 4;
  const Schedule s3 = ScheduleTrace(halves, p);
  EXPECT_DOUBLE_EQ(s3.makespan_ns, 2 * 262144 / 4.0);
}

// The compiler software-pipelines a loop of load -> compute -> store: the next iteration's load is
// issued before this iteration's store. A load that comes after a store in the trace fills the queues'
// idle time before that store and finishes after it, instead of waiting for a gap that holds it whole.
TEST(SchedulerTest, ALoadFillsTheIdleQueuesBeforeAnEarlierBookedStore) {
  DeviceParams p = SimpleDeviceForTest();
  const Trace trace = ParseTraceForTest(
      "I id=0 op=load eng=dma p=128 n=1024 in=hbm:4096 out=sbuf:4096 dir=load bytes=524288 run=4096 hbm=io\n"
      "I id=1 op=activation eng=act p=128 n=20000 in=sbuf:4096 out=sbuf:4096 dep=0\n"
      "I id=2 op=store eng=dma p=128 n=1024 in=sbuf:4096 out=hbm:4096 dep=1 dir=store bytes=524288 run=4096 "
      "hbm=io\n"
      "I id=3 op=load eng=dma p=128 n=1024 in=hbm:4096 out=sbuf:4096 dir=load bytes=524288 run=4096 hbm=io\n");
  const Schedule s = ScheduleTrace(trace, p);
  const double transfer = 524288 / 16.0;  // one DMA on all 16 queues
  EXPECT_DOUBLE_EQ(s.instructions[2].start_ns, transfer + 20000);
  EXPECT_DOUBLE_EQ(s.instructions[3].start_ns, transfer);    // during the activation
  EXPECT_DOUBLE_EQ(s.instructions[3].end_ns, 3 * transfer);  // the rest after the store
  EXPECT_DOUBLE_EQ(s.busy.dma_ns, 3 * transfer);             // the queues never idle
  EXPECT_DOUBLE_EQ(s.makespan_ns, 3 * transfer);
}

TEST(SchedulerTest, DmaLatencyIsExposedOnlyOnDependencyChains) {
  DeviceParams p = SimpleDeviceForTest();
  p.dma_fixed_latency_ns = 1000;
  const Trace trace = ParseTraceForTest(
      "I id=0 op=load eng=dma p=128 n=16 in=hbm:64 out=sbuf:64 dir=load bytes=8192 run=64 hbm=io\n"
      "I id=1 op=load eng=dma p=128 n=16 in=hbm:64 out=sbuf:64 dir=load bytes=8192 run=64 hbm=io\n"
      "I id=2 op=activation eng=act p=128 n=64 in=sbuf:64 out=sbuf:64 dep=1\n");
  const Schedule s = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(s.instructions[0].end_ns, 512 + 1000);
  EXPECT_DOUBLE_EQ(s.instructions[1].start_ns,
                   512);  // the queue is free again before the latency elapsed
  EXPECT_DOUBLE_EQ(s.instructions[2].start_ns, 1024 + 1000);
}

TEST(SchedulerTest, IsDeterministic) {
  const Trace trace = ParseTraceForTest(PipelineTrace(20));
  const DeviceParams p = SimpleDeviceForTest();
  const Schedule a = ScheduleTrace(trace, p);
  const Schedule b = ScheduleTrace(trace, p);
  ASSERT_EQ(a.instructions.size(), b.instructions.size());
  for (size_t i = 0; i < a.instructions.size(); ++i) {
    EXPECT_EQ(a.instructions[i].start_ns, b.instructions[i].start_ns);
    EXPECT_EQ(a.instructions[i].engine, b.instructions[i].engine);
  }
  EXPECT_EQ(a.makespan_ns, b.makespan_ns);
}

}  // namespace
}  // namespace accelopt::trainium

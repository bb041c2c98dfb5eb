#include "services/profiler/trainium/profile_counters.h"

#include "gtest/gtest.h"
#include "services/profiler/trainium/scheduler.h"
#include "services/profiler/trainium/test_util.h"
#include "services/profiler/trainium/timing_model.h"

namespace accelopt::trainium {
namespace {

// One of each kind of instruction the counting rules distinguish (reference section 5).
constexpr char kMixedTrace[] =
    "I id=0 op=load eng=dma p=128 n=512 in=hbm:2048 out=sbuf:2048 dir=load bytes=262144 run=2048 "
    "hbm=io\n"
    "I id=1 op=matmul eng=pe p=128 n=512 nstat=128 in=sbuf:512,sbuf:2048 out=psum:2048 dep=0\n"
    "I id=2 op=transpose eng=pe p=128 n=128 nstat=128 in=sbuf:512,sbuf:512 out=psum:512 dep=0\n"
    "I id=3 op=copy eng=auto p=128 n=512 in=psum:2048 out=sbuf:2048 dep=1\n"
    "I id=4 op=activation eng=act p=128 n=512 in=sbuf:2048 out=psum:2048 dep=3\n"
    "I id=5 op=tensor_tensor eng=dve p=128 n=512 in=sbuf:2048,sbuf:2048 out=sbuf:2048 dep=3\n"
    "I id=6 op=matmul eng=pe p=128 n=512 nstat=128 in=sbuf:512,sbuf:2048 out=psum:2048 dep=0 "
    "cse=1\n"
    "I id=7 op=store eng=dma p=128 n=512 in=sbuf:2048 out=hbm:2048 dep=5 dir=store bytes=262144 "
    "run=2048 "
    "hbm=io\n"
    "I id=8 op=store eng=dma p=64 n=250 in=sbuf:1000 out=hbm:1000 dep=5 dir=store bytes=64000 "
    "run=1000 "
    "hbm=scratch\n";

TEST(ProfileCountersTest, FollowsTheNeuronProfileCountingRules) {
  const Trace trace = ParseTraceForTest(kMixedTrace);
  const DeviceParams p = SimpleDeviceForTest();
  const Schedule schedule = ScheduleTrace(trace, p);
  const double latency = 100000;
  const ProfileCounters c = ComputeProfileCounters(trace, schedule, p, latency);

  // DMA: full bytes. The scratch store is the program's own spill.
  EXPECT_EQ(c.hbm_read_bytes, 262144);
  EXPECT_EQ(c.hbm_write_bytes, 262144 + 64000);
  EXPECT_EQ(c.spill_save_bytes, 64000);
  EXPECT_EQ(c.spill_reload_bytes, 0);
  // PE: per-partition operand bytes, twice for fp32; the eliminated matmul does not count. ACT: per
  // partition once (eviction copy reads PSUM and writes SBUF; the activation reads SBUF and writes
  // PSUM). DVE: nothing.
  EXPECT_EQ(c.sbuf_read_bytes, 262144 + 64000 + 2 * (512 + 2048) + 2 * (512 + 512) + 2048);
  EXPECT_EQ(c.sbuf_write_bytes, 262144 + 2048);
  EXPECT_EQ(c.psum_write_bytes, 2 * 2048 + 2 * 512 + 2048);
  EXPECT_EQ(c.psum_read_bytes, 2048);
  // FLOPs: 2 K M N, twice for fp32.
  const double matmul_flops = 2.0 * 128 * 128 * 512 * 2;
  const double transpose_flops = 2.0 * 128 * 128 * 128 * 2;
  EXPECT_DOUBLE_EQ(c.hardware_flops, matmul_flops + transpose_flops);
  EXPECT_DOUBLE_EQ(c.transpose_flops, transpose_flops);
  EXPECT_DOUBLE_EQ(c.mm_arithmetic_intensity, matmul_flops / (262144.0 + 262144 + 64000));
  EXPECT_DOUBLE_EQ(c.peak_flops_bandwidth_ratio, p.peak_flops_bandwidth_ratio);
  // hfu = flops / (2 * 128 * 128 * f_PE * time); SimpleDeviceForTest runs the PE at 1 GHz.
  EXPECT_DOUBLE_EQ(c.hfu_estimated_percent, (matmul_flops + transpose_flops) / (2.0 * 128 * 128 * latency));
  // Engine activity: ACT ran the copy and the activation (512 cycles each), DVE the tensor_tensor
  // (2 * 512).
  EXPECT_DOUBLE_EQ(c.scalar_engine_active_time_percent, 1024 / latency);
  EXPECT_DOUBLE_EQ(c.vector_engine_active_time_percent, 1024 / latency);
  EXPECT_DOUBLE_EQ(c.gpsimd_engine_active_time_percent, 0);
}

TEST(ProfileCountersTest, ActOutputsStagedInPsumCountAsPsumWrites) {
  const Trace trace = ParseTraceForTest(
      "I id=0 op=activation eng=act p=128 n=512 in=sbuf:2048 out=sbuf:2048\n"
      "I id=1 op=tensor_tensor eng=dve p=128 n=512 in=sbuf:2048,sbuf:2048 out=sbuf:2048 dep=0\n");
  DeviceParams p = SimpleDeviceForTest();
  p.act_outputs_to_psum_for_dve = 1;
  const ProfileCounters c = ComputeProfileCounters(trace, ScheduleTrace(trace, p), p, 10000);
  EXPECT_EQ(c.psum_write_bytes, 2048);
  EXPECT_EQ(c.sbuf_write_bytes, 0);
  EXPECT_EQ(c.sbuf_read_bytes, 2048);
}

TEST(ProfileCountersTest, CompilerSpillTrafficIsCounted) {
  Schedule schedule;
  schedule.traffic = {1000, 300, 600};  // rematerialised, spill save, spill reload
  const Trace empty;
  const ProfileCounters c = ComputeProfileCounters(empty, schedule, SimpleDeviceForTest(), 1000);
  EXPECT_EQ(c.hbm_read_bytes, 1600);
  EXPECT_EQ(c.sbuf_write_bytes, 1600);
  EXPECT_EQ(c.hbm_write_bytes, 300);
  EXPECT_EQ(c.sbuf_read_bytes, 300);
  EXPECT_EQ(c.spill_save_bytes, 300);
  EXPECT_EQ(c.spill_reload_bytes, 600);
}

TEST(ProfileCountersTest, TimingModelReportsLatencyAndActivity) {
  const Trace trace = ParseTraceForTest(kMixedTrace);
  DeviceParams p = SimpleDeviceForTest();
  p.kernel_launch_ns = 1000;
  const TimingResult r = RunTimingModel(trace, p, RooflineTerms{0, 1e9, 0});
  const Schedule s = ScheduleTrace(trace, p);
  EXPECT_DOUBLE_EQ(r.latency_ns, s.makespan_ns + 1000);
  EXPECT_DOUBLE_EQ(r.latency_ms, r.latency_ns * 1e-6);
  EXPECT_DOUBLE_EQ(r.active.act, 1024 / r.latency_ns);
  EXPECT_GT(r.active.dma, 0);
  EXPECT_LE(r.active.dma, 1);
  EXPECT_EQ(r.diagnostics.eliminated_instructions, 1);
  ASSERT_TRUE(r.roofline.has_value());
  EXPECT_EQ(r.roofline->bound, RooflineBound::kMatmul);

  const std::string json = ToJson(r);
  EXPECT_EQ(json.find("{\"kernel\":\"test.py\",\"device\":\"trn1\",\"latency_ns\":"), 0u);
  for (const char* field :
       {"hbm_read_bytes", "hbm_write_bytes", "psum_read_bytes", "psum_write_bytes", "sbuf_read_bytes",
        "sbuf_write_bytes", "spill_reload_bytes", "spill_save_bytes", "hardware_flops", "transpose_flops",
        "peak_flops_bandwidth_ratio", "mm_arithmetic_intensity", "hfu_estimated_percent",
        "scalar_engine_active_time_percent", "vector_engine_active_time_percent", "gpsimd_engine_active_time_percent",
        "\"engine_active\"", "\"bound\":\"matmul\""}) {
    EXPECT_NE(json.find(field), std::string::npos) << field;
  }
  EXPECT_LT(json.find("hbm_read_bytes"), json.find("gpsimd_engine_active_time_percent"));
}

}  // namespace
}  // namespace accelopt::trainium

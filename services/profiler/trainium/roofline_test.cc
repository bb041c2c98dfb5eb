#include "services/profiler/trainium/roofline.h"

#include "gtest/gtest.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/test_util.h"
#include "services/profiler/trainium/timing_model.h"

namespace accelopt::trainium {
namespace {

DeviceParams Trn1() {
  absl::StatusOr<DeviceParams> p = BuiltinDeviceParams("trn1");
  EXPECT_TRUE(p.ok());
  return *p;
}

TEST(RooflineTest, MatmulBoundProblem) {
  // matmul M=4096 N=12288 K=5120 (accelopt-algorithm.md 8.2: peak 21.701 ms, 61.7% of peak
  // at 35.1997 ms).
  const double m = 4096, n = 12288, k = 5120;
  const RooflineTerms terms{0, 2 * m * n * k, 4 * (m * n + n * k + m * k)};
  const RooflineResult r = ComputeRoofline(terms, 35.1997e6, Trn1());
  EXPECT_EQ(r.bound, RooflineBound::kMatmul);
  EXPECT_NEAR(r.peak_ns * 1e-6, 21.701, 0.001);
  EXPECT_NEAR(r.percent_of_peak, 61.7, 0.05);
}

TEST(RooflineTest, MemoryAndVectorBounds) {
  // silu M=4096 N=7168: vec 3MN, bytes 4 * 2MN; memory bound, peak 0.534 ms.
  const double m = 4096, n = 7168;
  const RooflineResult silu = ComputeRoofline({3 * m * n, 0, 8 * m * n}, 1.3332e6, Trn1());
  EXPECT_EQ(silu.bound, RooflineBound::kMemory);
  EXPECT_NEAR(silu.peak_ns * 1e-6, 0.534, 0.001);
  EXPECT_NEAR(silu.percent_of_peak, 40.0, 0.1);
  EXPECT_EQ(RooflineBoundName(silu.bound), "memory");

  const RooflineResult vec = ComputeRoofline({286.72e9, 0, 1}, 2e9, Trn1());  // one second of vector work
  EXPECT_EQ(vec.bound, RooflineBound::kVector);
  EXPECT_NEAR(vec.peak_ns, 1e9, 1);
  EXPECT_NEAR(vec.percent_of_peak, 50, 1e-9);
  EXPECT_DOUBLE_EQ(ComputeRoofline({1, 1, 1}, 0, Trn1()).percent_of_peak, 0);
}

TEST(RooflineTest, TwoCoresHaveTwiceTheCoresPeak) {
  // the matmul above, its programs spread over two NeuronCores (nl.nc(2)): at the same latency it reaches half the
  // share of the two cores' peak that it reaches of one core's
  const double m = 4096, n = 12288, k = 5120;
  const RooflineTerms terms{0, 2 * m * n * k, 4 * (m * n + n * k + m * k)};
  const RooflineResult two = ComputeRoofline(terms, 35.1997e6, Trn1(), 2);
  EXPECT_EQ(two.bound, RooflineBound::kMatmul);
  EXPECT_NEAR(two.peak_ns * 1e-6, 21.701 / 2, 0.001);
  EXPECT_NEAR(two.percent_of_peak, 61.7 / 2, 0.05);
  EXPECT_DOUBLE_EQ(ComputeRoofline(terms, 35.1997e6, Trn1(), 0).peak_ns,
                   ComputeRoofline(terms, 35.1997e6, Trn1()).peak_ns);
}

TEST(RooflineTest, SixteenBitMatmulsAreHeldToTheSixteenBitPeak) {
  // The problem's PEAK_MM is fp32's; a kernel computing its matmuls in bf16 runs them pe_fp32_factor (4) times as
  // fast, so against the fp32 peak a correct bf16 kernel would read over 100% (the plausibility check's
  // "physically impossible").
  const double m = 4096, n = 12288, k = 5120;
  const RooflineTerms terms{0, 2 * m * n * k, 4 * (m * n + n * k + m * k)};
  const RooflineResult bf16 = ComputeRoofline(terms, 8e6, Trn1(), 1, 4);
  EXPECT_EQ(bf16.bound, RooflineBound::kMatmul);
  EXPECT_NEAR(bf16.peak_ns * 1e-6, 21.701 / 4, 0.001);
  EXPECT_NEAR(bf16.percent_of_peak, 100 * 21.701 / 4 / 8, 0.05);

  // The timing model takes the speedup from the trace: only a matmul with operands narrower than 4 bytes has it.
  const std::string fp32 = "I id=0 op=matmul eng=pe p=128 n=512 nstat=128 in=sbuf:2048,sbuf:512 out=psum:2048\n";
  const std::string narrow = "I id=0 op=matmul eng=pe p=128 n=512 nstat=128 dt=2 in=sbuf:1024,sbuf:256 out=psum:2048\n";
  const std::string transpose = "I id=0 op=transpose eng=pe p=128 n=128 dt=2 in=sbuf:256 out=psum:512\n";
  EXPECT_DOUBLE_EQ(MatmulSpeedup(ParseTraceForTest(fp32), Trn1()), 1);
  EXPECT_DOUBLE_EQ(MatmulSpeedup(ParseTraceForTest(narrow), Trn1()), 4);
  EXPECT_DOUBLE_EQ(MatmulSpeedup(ParseTraceForTest(transpose), Trn1()), 1);
  const RooflineTerms small{0, 2.0 * 128 * 128 * 512, 1};
  const TimingResult r32 = RunTimingModel(ParseTraceForTest(fp32), Trn1(), small);
  const TimingResult r16 = RunTimingModel(ParseTraceForTest(narrow), Trn1(), small);
  EXPECT_NEAR(r16.roofline->peak_ns, r32.roofline->peak_ns / 4, 1e-9);
}

}  // namespace
}  // namespace accelopt::trainium

#include "services/profiler/trainium/roofline.h"

#include "gtest/gtest.h"
#include "services/profiler/trainium/device_params.h"

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

}  // namespace
}  // namespace accelopt::trainium

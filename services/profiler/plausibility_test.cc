#include "services/profiler/plausibility.h"

#include <gtest/gtest.h>

namespace accelopt::profiler {
namespace {

v1::ProfileResult Timed(double peak_percent, double hbm_write_bytes) {
  v1::ProfileResult r;
  r.set_verdict(v1::VERDICT_OK);
  r.mutable_latency()->set_mean_ms(0.5);
  r.set_peak_percent(peak_percent);
  r.mutable_counters()->set_hbm_write_bytes(hbm_write_bytes);
  return r;
}

TEST(PlausibilityTest, AnHonestResultPasses) {
  EXPECT_EQ(ImplausibilityReason(Timed(87.5, 4096), 4096), "");
  EXPECT_EQ(ImplausibilityReason(Timed(100.0, 4096), std::nullopt), "");
}

TEST(PlausibilityTest, AbovePeakIsNeverPlausible) {
  std::string why = ImplausibilityReason(Timed(1137, 4096), 4096);
  EXPECT_NE(why.find("1137.0% of peak"), std::string::npos) << why;
  EXPECT_NE(why.find("roofline bound"), std::string::npos) << why;
}

TEST(PlausibilityTest, WritingLessThanTheOutputsIsNeverPlausible) {
  std::string why = ImplausibilityReason(Timed(40, 4), 262144);
  EXPECT_NE(why.find("wrote 4 bytes to HBM but the kernel's outputs are 262144 bytes"), std::string::npos) << why;
}

TEST(PlausibilityTest, WithoutAPeakOrCountersNothingIsClaimed) {
  v1::ProfileResult r;
  r.set_verdict(v1::VERDICT_OK);
  EXPECT_EQ(ImplausibilityReason(r, 100), "");
}

}  // namespace
}  // namespace accelopt::profiler

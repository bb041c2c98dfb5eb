#include "services/profiler/profiler_config.h"

#include <gtest/gtest.h>

namespace accelopt::profiler {
namespace {

TEST(ProfilerConfigTest, DefaultsAreValidAndUseTheTrn1Simulator) {
  v1::ProfilerConfig c;
  ApplyProfilerDefaults(&c);
  EXPECT_TRUE(ValidateProfilerConfig(c).ok());
  EXPECT_EQ(c.device(), v1::DEVICE_SIM_TRN1);
  EXPECT_EQ(c.python(), "/usr/bin/python3");
}

TEST(ProfilerConfigTest, RejectsNegativeSlotsNamingTheField) {
  v1::ProfilerConfig c;
  c.set_slots(-1);
  ApplyProfilerDefaults(&c);
  EXPECT_NE(ValidateProfilerConfig(c).message().find("slots"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::profiler

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

TEST(ProfilerConfigTest, TmpfsSizesMustFitInsideTheMemoryBudget) {
  v1::ProfilerConfig c;
  c.mutable_sandbox()->set_memory_mb(1024);
  c.mutable_sandbox()->set_tmp_mb(512);
  c.mutable_sandbox()->set_scratch_mb(512);
  ApplyProfilerDefaults(&c);
  EXPECT_NE(ValidateProfilerConfig(c).message().find("sandbox.memory_mb"), std::string::npos);
  c.mutable_sandbox()->set_scratch_mb(256);
  EXPECT_TRUE(ValidateProfilerConfig(c).ok());
  sandbox::SandboxLimits limits = SandboxLimitsFromConfig(c.sandbox());
  EXPECT_EQ(limits.memory_mb, 1024);
  EXPECT_EQ(limits.tmp_mb, 512);
  EXPECT_EQ(limits.scratch_mb, 256);
}

}  // namespace
}  // namespace accelopt::profiler

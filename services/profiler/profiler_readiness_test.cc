#include "services/profiler/profiler_readiness.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "libs/core/file.h"
#include "libs/testing/scratch_dir.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/builtin_backends.h"

namespace accelopt::profiler {
namespace {

// A sim-trn1 profiler with the real harness and `bwrap` as its sandbox binary.
std::unique_ptr<KernelProfiler> ProfilerWithBwrap(const std::string& bwrap) {
  KernelProfilerOptions options;
  options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/harness";
  options.bwrap = bwrap;
  auto backend = BuiltinBackends().Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig());
  EXPECT_TRUE(backend.ok()) << backend.status();
  return std::make_unique<KernelProfiler>(std::move(options), *std::move(backend));
}

// An executable shell script at `path` that exits with `code`.
void WriteFakeBwrap(const std::string& path, int code) {
  ASSERT_TRUE(core::WriteFileAtomic(path, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace'\nexit " +
                                              std::to_string(code) + "\n")
                  .ok());
  ASSERT_EQ(chmod(path.c_str(), 0755), 0);
}

class ProfilerReadinessTest : public ::testing::Test {
 protected:
  // A worker running as root starts the sandbox as an unprivileged user, who must reach the fake bwrap.
  accelopt::testing::ScratchDir scratch_{"", 0755};
  const std::string dir_ = scratch_.path();
};

TEST_F(ProfilerReadinessTest, ReadyWhenTheRealSandboxStarts) {
  auto profiler = ProfilerWithBwrap("bwrap");
  ProfilerReadiness readiness(profiler.get());
  absl::Status s = readiness.Check();
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(ProfilerReadinessTest, NotReadyWhenTheSandboxCannotStartAndNamesWhy) {
  const std::string bwrap = dir_ + "/bwrap";
  WriteFakeBwrap(bwrap, 1);
  auto profiler = ProfilerWithBwrap(bwrap);
  ASSERT_TRUE(profiler->CheckReady().ok());  // the start-up checks alone do not see it
  ProfilerReadiness readiness(profiler.get());
  absl::Status s = readiness.Check();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(s.message(),
            "the sandbox does not start (" + bwrap + " exit code 1): bwrap: No permissions to create new namespace");
}

TEST_F(ProfilerReadinessTest, SandboxStartIsRecheckedOnlyAfterThePeriod) {
  const std::string bwrap = dir_ + "/bwrap";
  WriteFakeBwrap(bwrap, 1);
  auto profiler = ProfilerWithBwrap(bwrap);
  ProfilerReadiness cached(profiler.get(), absl::InfiniteDuration());
  ProfilerReadiness every_call(profiler.get(), absl::ZeroDuration());
  EXPECT_FALSE(cached.Check().ok());
  EXPECT_FALSE(every_call.Check().ok());
  WriteFakeBwrap(bwrap, 0);  // the sandbox "starts" now
  EXPECT_FALSE(cached.Check().ok());
  EXPECT_TRUE(every_call.Check().ok());
}

TEST_F(ProfilerReadinessTest, StartUpChecksComeFirst) {
  auto profiler = ProfilerWithBwrap("/nonexistent/bwrap");
  ProfilerReadiness readiness(profiler.get());
  EXPECT_NE(readiness.Check().message().find("sandbox.bwrap: '/nonexistent/bwrap' not found"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::profiler

#include "libs/sandbox/worker_sandbox.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace accelopt::sandbox {
namespace {

TEST(WorkerSandboxTest, TooManySlotsForOneRangeIsRejected) {
  EXPECT_EQ(PrepareWorkerSandbox("/nonexistent", ::testing::TempDir(), 0, 65).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkerSandboxTest, TwoWorkersInOneProcessGetDisjointUidsAndTheirOwnHarnessCopies) {
  const std::string harness = ::testing::TempDir() + "/worker_sandbox_test_" + std::to_string(getpid());
  std::filesystem::create_directories(harness);
  std::ofstream(harness + "/run_kernel.py") << "pass";
  auto a = PrepareWorkerSandbox(harness, ::testing::TempDir(), 0, 4);
  auto b = PrepareWorkerSandbox(harness, ::testing::TempDir(), 0, 4);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->uids.base(), b->uids.base());
  EXPECT_GE(std::abs(a->uids.base() - b->uids.base()), a->uids.width());
  EXPECT_NE(a->harness.path(), b->harness.path());
  EXPECT_TRUE(std::filesystem::exists(a->harness.path() + "/run_kernel.py"));
  std::filesystem::remove_all(harness);
}

}  // namespace
}  // namespace accelopt::sandbox

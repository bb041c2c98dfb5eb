#include "libs/sandbox/worker_sandbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
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
  EXPECT_NE(a->scratch.path(), b->scratch.path());
  std::filesystem::remove_all(harness);
}

TEST(WorkerSandboxTest, TheScratchDirectoryIsTraversableNotListableAndGoesWithTheWorker) {
  const std::string harness = ::testing::TempDir() + "/worker_sandbox_scratch_" + std::to_string(getpid());
  std::filesystem::create_directories(harness);
  std::ofstream(harness + "/run_kernel.py") << "pass";
  std::string scratch;
  {
    auto worker = PrepareWorkerSandbox(harness, ::testing::TempDir(), 0, 1);
    ASSERT_TRUE(worker.ok()) << worker.status();
    scratch = worker->scratch.path();
    struct stat st {};
    ASSERT_EQ(stat(scratch.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0711u);
    std::filesystem::create_directories(scratch + "/accelopt-profile-x");
  }
  EXPECT_FALSE(std::filesystem::exists(scratch));
  std::filesystem::remove_all(harness);
}

}  // namespace
}  // namespace accelopt::sandbox

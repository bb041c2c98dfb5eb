#include "libs/sandbox/worker_sandbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "libs/testing/scratch_dir.h"

namespace accelopt::sandbox {
namespace {

TEST(WorkerSandboxTest, TooManySlotsForOneRangeIsRejected) {
  testing::ScratchDir root;
  EXPECT_EQ(PrepareWorkerSandbox("/nonexistent", root.path(), 0, 65).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkerSandboxTest, TwoWorkersInOneProcessGetDisjointUidsAndTheirOwnHarnessCopies) {
  testing::ScratchDir root;
  const std::string harness = root.Path("harness");
  std::filesystem::create_directories(harness);
  std::ofstream(harness + "/run_kernel.py") << "pass";
  auto a = PrepareWorkerSandbox(harness, root.path(), 0, 4);
  auto b = PrepareWorkerSandbox(harness, root.path(), 0, 4);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->uids.base(), b->uids.base());
  EXPECT_GE(std::abs(a->uids.base() - b->uids.base()), a->uids.width());
  EXPECT_NE(a->harness.path(), b->harness.path());
  EXPECT_TRUE(std::filesystem::exists(a->harness.path() + "/run_kernel.py"));
  EXPECT_NE(a->scratch.path(), b->scratch.path());
}

TEST(WorkerSandboxTest, TheScratchDirectoryIsTraversableNotListableAndGoesWithTheWorker) {
  testing::ScratchDir root;
  const std::string harness = root.Path("harness");
  std::filesystem::create_directories(harness);
  std::ofstream(harness + "/run_kernel.py") << "pass";
  std::string scratch;
  {
    auto worker = PrepareWorkerSandbox(harness, root.path(), 0, 1);
    ASSERT_TRUE(worker.ok()) << worker.status();
    scratch = worker->scratch.path();
    struct stat st {};
    ASSERT_EQ(stat(scratch.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0711u);
    std::filesystem::create_directories(scratch + "/accelopt-profile-x");
  }
  EXPECT_FALSE(std::filesystem::exists(scratch));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(root.path()), {}), 1) << "only the harness is left";
}

}  // namespace
}  // namespace accelopt::sandbox

#include "libs/sandbox/locked_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "libs/testing/scratch_dir.h"

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr char kPrefix[] = "accelopt-test-";

TEST(LockedDirTest, HasTheModeAndIsRemovedWithItsContentsAndLock) {
  testing::ScratchDir scratch;
  const std::string& root = scratch.path();
  std::string path;
  {
    auto dir = LockedDir::Create(root, kPrefix, 0711);
    ASSERT_TRUE(dir.ok()) << dir.status();
    path = dir->path();
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0711u);
    fs::create_directories(path + "/profile/sub");
    std::ofstream(path + "/profile/sub/result.json") << "{}";
    EXPECT_TRUE(fs::exists(path + ".lock"));
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".lock"));
}

// A process killed with SIGKILL runs no destructor; the next Create under the same root removes what it left.
TEST(LockedDirTest, WhatAKilledProcessLeftIsRemovedByTheNextCreate) {
  testing::ScratchDir scratch;
  const std::string& root = scratch.path();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto dir = LockedDir::Create(root, kPrefix, 0711);
    if (!dir.ok()) _exit(1);
    std::ofstream(dir->path() + "/kernel.py") << "pass";
    std::string path = dir->path();
    (void)!write(ready[1], path.data(), path.size());
    close(ready[1]);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char buf[512] = {};
  const ssize_t n = read(ready[0], buf, sizeof(buf) - 1);
  close(ready[0]);
  ASSERT_GT(n, 0);
  const std::string left(buf, n);
  // While the process lives, its directory stays.
  {
    auto other = LockedDir::Create(root, kPrefix, 0700);
    ASSERT_TRUE(other.ok()) << other.status();
  }
  EXPECT_TRUE(fs::exists(left + "/kernel.py"));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(fs::exists(left + "/kernel.py"));
  auto next = LockedDir::Create(root, kPrefix, 0711);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_FALSE(fs::exists(left));
  EXPECT_FALSE(fs::exists(left + ".lock"));
}

// A killed process's lock file is free at once: the worker that restarts right away reclaims what it left.
TEST(LockedDirTest, AYoungUnlockedDirectoryIsRemovedAndOtherPrefixesAreLeftAlone) {
  testing::ScratchDir scratch;
  const std::string& root = scratch.path();
  fs::create_directories(root + "/accelopt-test-young0/sub");
  std::ofstream(root + "/accelopt-test-young0.lock");
  fs::create_directories(root + "/accelopt-other-old000");
  std::ofstream(root + "/accelopt-other-old000.lock");
  auto dir = LockedDir::Create(root, kPrefix, 0711);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_FALSE(fs::exists(root + "/accelopt-test-young0"));
  EXPECT_FALSE(fs::exists(root + "/accelopt-test-young0.lock"));
  EXPECT_TRUE(fs::exists(root + "/accelopt-other-old000"));
  EXPECT_TRUE(fs::exists(root + "/accelopt-other-old000.lock"));
}

// Workers starting together under one root each keep their own directory: none reclaims another's new one.
TEST(LockedDirTest, ConcurrentCreatesUnderOneRootKeepTheirDirectories) {
  testing::ScratchDir scratch;
  const std::string& root = scratch.path();
  constexpr int kChildren = 4;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int i = 0; i < 50; ++i) {
        auto dir = LockedDir::Create(root, kPrefix, 0711);
        if (!dir.ok()) _exit(1);
        std::ofstream(dir->path() + "/f") << "x";
        if (!fs::exists(dir->path() + "/f") || !fs::exists(dir->path() + ".lock")) _exit(2);
      }
      _exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  EXPECT_TRUE(fs::is_empty(root));
}

TEST(LockedDirTest, AMissingRootIsAnErrorNamingIt) {
  auto dir = LockedDir::Create("/nonexistent/scratch", kPrefix, 0711);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("/nonexistent/scratch"), std::string::npos) << dir.status();
}

}  // namespace
}  // namespace accelopt::sandbox

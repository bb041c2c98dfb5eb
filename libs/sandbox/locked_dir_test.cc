#include "libs/sandbox/locked_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr char kPrefix[] = "accelopt-test-";

std::string FreshRoot(const std::string& name) {
  const std::string root = ::testing::TempDir() + "/locked_dir_" + name + "_" + std::to_string(getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

void Age(const std::string& path) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::minutes(5));
}

TEST(LockedDirTest, HasTheModeAndIsRemovedWithItsContentsAndLock) {
  const std::string root = FreshRoot("mode");
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
  fs::remove_all(root);
}

// A process killed with SIGKILL runs no destructor; the next Create under the same root removes what it left.
TEST(LockedDirTest, WhatAKilledProcessLeftIsRemovedByTheNextCreate) {
  const std::string root = FreshRoot("killed");
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
  // While the process lives, its directory stays even when old.
  Age(left + ".lock");
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
  fs::remove_all(root);
}

TEST(LockedDirTest, AFreshUnlockedDirectoryAndOtherPrefixesAreLeftAlone) {
  const std::string root = FreshRoot("fresh");
  // Unlocked but younger than a minute: its process may be between creating and locking it.
  fs::create_directories(root + "/accelopt-test-young0");
  std::ofstream(root + "/accelopt-test-young0.lock");
  // Old and unlocked, but another kind of directory.
  fs::create_directories(root + "/accelopt-other-old000");
  std::ofstream(root + "/accelopt-other-old000.lock");
  Age(root + "/accelopt-other-old000.lock");
  auto dir = LockedDir::Create(root, kPrefix, 0711);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_TRUE(fs::exists(root + "/accelopt-test-young0"));
  EXPECT_TRUE(fs::exists(root + "/accelopt-other-old000"));
  fs::remove_all(root);
}

TEST(LockedDirTest, AMissingRootIsAnErrorNamingIt) {
  auto dir = LockedDir::Create("/nonexistent/scratch", kPrefix, 0711);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("/nonexistent/scratch"), std::string::npos) << dir.status();
}

}  // namespace
}  // namespace accelopt::sandbox

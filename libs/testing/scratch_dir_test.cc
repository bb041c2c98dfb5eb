#include "libs/testing/scratch_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace accelopt::testing {
namespace {

namespace fs = std::filesystem;

TEST(ScratchDirTest, IsAFreshPrivateDirectoryUnderTheTestTempDirRemovedWithItsContents) {
  std::string path;
  {
    ScratchDir a("scratch_dir_test");
    ScratchDir b("scratch_dir_test");
    path = a.path();
    ASSERT_TRUE(fs::is_directory(path));
    EXPECT_NE(a.path(), b.path());
    EXPECT_EQ(fs::path(path).parent_path(), fs::path(::testing::TempDir()).lexically_normal().parent_path());
    EXPECT_EQ(fs::path(path).filename().string().rfind("scratch_dir_test_", 0), 0u);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::create_directories(a.Path("x/y"));
    std::ofstream(a.Path("x/y/z")) << "z";
    EXPECT_TRUE(fs::exists(path + "/x/y/z"));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(ScratchDirTest, IsNamedAfterTheTestByDefault) {
  ScratchDir dir;
  EXPECT_EQ(fs::path(dir.path()).filename().string().rfind("ScratchDirTest.IsNamedAfterTheTestByDefault_", 0), 0u);
}

TEST(ScratchDirTest, KeepLeavesItInPlace) {
  std::string path;
  {
    ScratchDir dir;
    path = dir.path();
    dir.Keep();
  }
  EXPECT_TRUE(fs::is_directory(path));
  fs::remove_all(path);
}

TEST(ScratchDirTest, TakesTheModeSandboxUsersNeed) {
  ScratchDir dir("", 0711);
  struct stat st {};
  ASSERT_EQ(stat(dir.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0711u);
}

}  // namespace
}  // namespace accelopt::testing

#include "libs/sandbox/staged_copy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "libs/core/file.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

TEST(StagedCopyTest, CopyOfAPrivateTreeIsWorldReadableAndRemovedAfterwards) {
  testing::ScratchDir dir("staged_copy_test");
  const std::string& root = dir.path();
  fs::create_directories(root + "/private/tree/pkg/__pycache__");
  std::ofstream(root + "/private/tree/run.py") << "print(1)";
  std::ofstream(root + "/private/tree/pkg/mod.py") << "X = 1";
  std::ofstream(root + "/private/tree/pkg/__pycache__/mod.pyc") << "junk";
  fs::create_directories(root + "/private/tree/.mypy_cache/3.11");
  std::ofstream(root + "/private/tree/.mypy_cache/3.11/mod.data.json") << "{}";
  std::ofstream(root + "/private/tree/pkg/.mod.py.swp") << "junk";
  chmod((root + "/private/tree/run.py").c_str(), 0700);
  chmod((root + "/private/tree/pkg/mod.py").c_str(), 0600);
  chmod((root + "/private").c_str(), 0700);

  std::string staged;
  {
    auto copy = StagedCopy::Create(root + "/private/tree", root);
    ASSERT_TRUE(copy.ok()) << copy.status();
    staged = copy->path();
    struct stat st;
    ASSERT_EQ(stat(staged.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    ASSERT_EQ(stat((staged + "/run.py").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    ASSERT_EQ(stat((staged + "/pkg/mod.py").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    EXPECT_EQ(*core::ReadFile(staged + "/pkg/mod.py"), "X = 1");
    EXPECT_FALSE(fs::exists(staged + "/pkg/__pycache__"));
    EXPECT_FALSE(fs::exists(staged + "/.mypy_cache"));
    EXPECT_FALSE(fs::exists(staged + "/pkg/.mod.py.swp"));
  }
  EXPECT_FALSE(fs::exists(staged));
}

TEST(StagedCopyTest, MissingSourceIsAnError) {
  testing::ScratchDir root("staged_copy_test");
  EXPECT_FALSE(StagedCopy::Create("/nonexistent/tree", root.path()).ok());
  EXPECT_TRUE(fs::is_empty(root.path()));
}

}  // namespace
}  // namespace accelopt::sandbox

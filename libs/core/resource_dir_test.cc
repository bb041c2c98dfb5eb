#include "libs/core/resource_dir.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::core {
namespace {
namespace fs = std::filesystem;

class ResourceDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "data" / "prompts" / "default");
    std::ofstream(root_ / "data" / "prompts" / "default" / "x.md") << "x";
    fs::create_directories(root_ / "real-harness");
    std::ofstream(root_ / "real-harness" / "run_kernel.py") << "";
    fs::create_directory_symlink(root_ / "real-harness", root_ / "data" / "harness");
    if (const char* old = std::getenv("ACCELOPT_DATA_DIR"); old != nullptr) saved_ = old;
    setenv("ACCELOPT_DATA_DIR", (root_ / "data").c_str(), 1);
  }
  void TearDown() override {
    if (saved_.empty()) {
      unsetenv("ACCELOPT_DATA_DIR");
    } else {
      setenv("ACCELOPT_DATA_DIR", saved_.c_str(), 1);
    }
  }
  testing::ScratchDir scratch_;
  const fs::path root_ = scratch_.path();
  std::string saved_;
};

TEST_F(ResourceDirTest, DataDirVariableComesFirst) {
  EXPECT_EQ(DataRoots().front(), (root_ / "data").string());
  EXPECT_EQ(FindResourceDir("prompts", "default"), fs::canonical(root_ / "data" / "prompts").string());
}

TEST_F(ResourceDirTest, SymlinksAreResolved) {
  EXPECT_EQ(FindResourceDir("harness", "run_kernel.py"), fs::canonical(root_ / "real-harness").string());
}

TEST_F(ResourceDirTest, MissingMarkerFallsBackToInstallPrefix) {
  const std::string dir = FindResourceDir("harness", "no_such_file.py");
  EXPECT_NE(dir.find("/share/accelopt/harness"), std::string::npos) << dir;
  EXPECT_EQ(dir.find(root_.string()), std::string::npos) << dir;
}

TEST_F(ResourceDirTest, InstallPrefixIsBesideTheBinary) {
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const std::vector<std::string> roots = DataRoots();
  ASSERT_GE(roots.size(), 2u);
  EXPECT_EQ(roots[1], (exe.parent_path().parent_path() / "share" / "accelopt").string());
}

}  // namespace
}  // namespace accelopt::core

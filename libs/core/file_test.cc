#include "libs/core/file.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "libs/testing/scratch_dir.h"

namespace accelopt::core {
namespace {

TEST(FileTest, AtomicWriteThenReadReturnsContents) {
  testing::ScratchDir scratch;
  std::string path = scratch.Path("file_test.txt");
  ASSERT_TRUE(WriteFileAtomic(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "two").ok());
  EXPECT_EQ(*ReadFile(path), "two");
}

TEST(FileTest, MissingFileIsNotFoundNamingThePath) {
  auto r = ReadFile("/nonexistent/dir/x.yaml");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/x.yaml"), std::string::npos);
}

TEST(FileTest, DirectoryIsAnErrorNamingThePathNotAnEmptyFile) {
  testing::ScratchDir scratch;
  auto r = ReadFile(scratch.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(scratch.path()), std::string::npos);
  EXPECT_NE(r.status().message().find("Is a directory"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::core

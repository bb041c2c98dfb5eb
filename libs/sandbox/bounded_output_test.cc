#include "libs/sandbox/bounded_output.h"

#include <gtest/gtest.h>

#include <string>

namespace accelopt::sandbox {
namespace {

TEST(BoundedOutputTest, KeepsEverythingThatFits) {
  BoundedOutput out(4, 4);
  out.Append("abc");
  out.Append("defgh");
  EXPECT_EQ(out.Text(), "abcdefgh");
  EXPECT_EQ(out.total_bytes(), 8u);
}

TEST(BoundedOutputTest, KeepsHeadAndTailAndCountsTheRest) {
  BoundedOutput out(3, 4);
  for (char c = 'a'; c <= 'z'; ++c) out.Append(std::string(1, c));
  EXPECT_EQ(out.Text(), "abc\n[... 19 bytes dropped ...]\nwxyz");
}

TEST(BoundedOutputTest, LargeAppendsKeepTheirEnd) {
  BoundedOutput out(2, 3);
  out.Append(std::string(1000, 'x') + "END");
  out.Append("12");
  EXPECT_EQ(out.Text(), "xx\n[... 1000 bytes dropped ...]\nD12");
}

}  // namespace
}  // namespace accelopt::sandbox

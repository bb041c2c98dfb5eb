#include "libs/report/line_diff.h"

#include <gtest/gtest.h>

namespace accelopt::report {
namespace {

std::string Render(const std::vector<DiffLine>& lines) {
  std::string out;
  for (const DiffLine& l : lines) out += std::string(1, l.op) + l.text + "\n";
  return out;
}

TEST(DiffLines, KeepsCommonLinesAndMarksChanges) {
  EXPECT_EQ(Render(DiffLines("a\nb\nc", "a\nx\nc\nd")), " a\n-b\n+x\n c\n+d\n");
}

TEST(DiffLines, IdenticalTextsHaveNoChanges) { EXPECT_EQ(Render(DiffLines("a\nb", "a\nb")), " a\n b\n"); }

TEST(DiffLines, OverlongTextsAreReplacedWhole) {
  EXPECT_EQ(Render(DiffLines("a\nb", "a\nc", /*max_lines=*/1)), "-a\n-b\n+a\n+c\n");
}

}  // namespace
}  // namespace accelopt::report

#include "libs/llm/text_extract.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

TEST(PlanTitleTest, PrefersTheFirstBoldSpanThenTheFirstLine) {
  EXPECT_EQ(PlanTitle("Intro\n**Hoist the weight loads** out of the loop"), "Hoist the weight loads");
  EXPECT_EQ(PlanTitle("****\n**  Fuse  **"), "Fuse");
  EXPECT_EQ(PlanTitle("\n\n## Tile the K loop by 512\nbody"), "Tile the K loop by 512");
  EXPECT_EQ(PlanTitle(""), "");
  EXPECT_EQ(PlanTitle(std::string(500, 'x')).size(), 200u);
}

TEST(FirstFencedBlockTest, TakesTheFirstBlockWithoutItsLanguageTag) {
  absl::StatusOr<std::string> code =
      FirstFencedBlock("Here:\n```python\n\ndef kernel(a):\n    return a\n\n```\nand\n```\nsecond\n```");
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, "def kernel(a):\n    return a");
  EXPECT_EQ(*FirstFencedBlock("```\nx = 1\n```"), "x = 1");
}

TEST(FirstFencedBlockTest, SaysWhyThereIsNoCode) {
  EXPECT_EQ(FirstFencedBlock("def kernel(): pass").status().message(), "no fenced code block in the response");
  EXPECT_NE(FirstFencedBlock("```python\ndef kernel(a):\n").status().message().find("never closed"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::llm

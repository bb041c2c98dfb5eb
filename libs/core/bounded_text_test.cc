#include "libs/core/bounded_text.h"

#include <gtest/gtest.h>

#include <string>

namespace accelopt::core {
namespace {

TEST(BoundedTextTest, ShortTextIsKept) {
  EXPECT_EQ(BoundedText("job-1", 5), "job-1");
  EXPECT_EQ(BoundedText("", 0), "");
}

TEST(BoundedTextTest, LongTextIsCutAndSaysHowMuchWasLeftOut) {
  EXPECT_EQ(BoundedText(std::string(10, 'U'), 4), "UUUU... (6 bytes more)");
}

TEST(BoundedTextTest, ACutNeverSplitsAUtf8Character) {
  // "a" then two-byte characters: a cut at 4 bytes would fall inside the second one
  const std::string text = "a\xC3\xA9\xC3\xA9\xC3\xA9";
  EXPECT_EQ(BoundedText(text, 4), "a\xC3\xA9... (4 bytes more)");
  EXPECT_EQ(BoundedText(text, 3), "a\xC3\xA9... (4 bytes more)");
  EXPECT_EQ(BoundedText("\xE2\x82\xAC", 2), "... (3 bytes more)");
}

}  // namespace
}  // namespace accelopt::core

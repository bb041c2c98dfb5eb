#include "libs/core/log.h"

#include <gtest/gtest.h>

namespace accelopt::core {
namespace {

TEST(JsonEscapeTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonEscape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

TEST(LogLevelTest, ParsesKnownLevelsAndRejectsOthersByName) {
  ASSERT_TRUE(SetLogLevelFromString("warning").ok());
  EXPECT_EQ(GetLogLevel(), LogLevel::kWarning);
  absl::Status bad = SetLogLevelFromString("loud");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("'loud'"), std::string::npos);
  EXPECT_EQ(GetLogLevel(), LogLevel::kWarning);
  SetLogLevel(LogLevel::kInfo);
}

TEST(LogMessageTest, WritesOneJsonLinePerEvent) {
  testing::internal::CaptureStderr();
  SetLogService("unit");
  ACCELOPT_LOG(INFO).With("job_id", "j1") << "hello " << 42;
  ACCELOPT_LOG(DEBUG) << "hidden";
  std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1);
  EXPECT_NE(out.find("\"service\":\"unit\""), std::string::npos);
  EXPECT_NE(out.find("\"msg\":\"hello 42\""), std::string::npos);
  EXPECT_NE(out.find("\"job_id\":\"j1\""), std::string::npos);
  EXPECT_NE(out.find("\"level\":\"info\""), std::string::npos);
  EXPECT_EQ(out.find("hidden"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::core

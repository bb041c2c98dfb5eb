#include "libs/llm/retry_after.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

TEST(RetryAfterTest, ReadsSecondsIncludingDecimals) {
  absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  EXPECT_EQ(ParseRetryAfter("3", now), absl::Seconds(3));
  EXPECT_EQ(ParseRetryAfter(" 0.5 ", now), absl::Milliseconds(500));
  EXPECT_FALSE(ParseRetryAfter("-1", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("soon", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("", now).has_value());
}

TEST(RetryAfterTest, ReadsHttpDatesRelativeToNow) {
  absl::Time now;
  std::string error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, "2026-10-21T07:27:30Z", &now, &error));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:28:00 GMT", now), absl::Seconds(30));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:00:00 GMT", now), absl::ZeroDuration());
}

}  // namespace
}  // namespace accelopt::llm

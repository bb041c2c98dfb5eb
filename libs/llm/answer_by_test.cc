#include "libs/llm/answer_by.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

TEST(AnswerByTest, TheCallsDeadlineLessTenPercentAtMostThirtySeconds) {
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  google::protobuf::Timestamp by;
  FillAnswerBy(absl::ToChronoTime(now + absl::Seconds(10)), now, &by);
  EXPECT_EQ(AnswerBy(by), now + absl::Seconds(9));
  google::protobuf::Timestamp long_call;
  FillAnswerBy(absl::ToChronoTime(now + absl::Seconds(900)), now, &long_call);
  EXPECT_EQ(AnswerBy(long_call), now + absl::Seconds(870));
}

TEST(AnswerByTest, NoDeadlineMeansNeverAndAGivenValueIsKept) {
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  google::protobuf::Timestamp none;
  FillAnswerBy(std::chrono::system_clock::time_point::max(), now, &none);
  EXPECT_EQ(AnswerBy(none), absl::InfiniteFuture());
  google::protobuf::Timestamp given;
  given.set_seconds(1'800'000'005);
  FillAnswerBy(absl::ToChronoTime(now + absl::Seconds(100)), now, &given);
  EXPECT_EQ(AnswerBy(given), now + absl::Seconds(5));
}

}  // namespace
}  // namespace accelopt::llm

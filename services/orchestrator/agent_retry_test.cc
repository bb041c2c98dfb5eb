#include "services/orchestrator/agent_retry.h"

#include <gtest/gtest.h>

namespace accelopt::orchestrator {
namespace {

const absl::Time kStart = absl::UnixEpoch();

AgentRetryPolicy Policy() {
  AgentRetryPolicy policy;
  policy.initial_backoff = absl::Milliseconds(100);
  policy.max_backoff = absl::Milliseconds(400);
  policy.max_elapsed = absl::Seconds(10);
  return policy;
}

TEST(RetryScheduleTest, BackoffDoublesWithJitterUpToTheMax) {
  RetrySchedule schedule(Policy(), kStart, kStart + absl::Hours(1));
  absl::Time now = kStart;
  for (absl::Duration cap :
       {absl::Milliseconds(100), absl::Milliseconds(200), absl::Milliseconds(400), absl::Milliseconds(400)}) {
    auto wait = schedule.NextBackoff(absl::UnavailableError("down"), now);
    ASSERT_TRUE(wait.has_value());
    EXPECT_GE(*wait, cap / 2);
    EXPECT_LE(*wait, cap);
    now += *wait;
  }
  EXPECT_EQ(schedule.retries(), 4);
}

TEST(RetryScheduleTest, OnlyUnavailableAndDeadlineExceededAreRetried) {
  RetrySchedule schedule(Policy(), kStart, kStart + absl::Hours(1));
  EXPECT_TRUE(schedule.NextBackoff(absl::DeadlineExceededError("slow"), kStart).has_value());
  EXPECT_FALSE(schedule.NextBackoff(absl::InvalidArgumentError("bad"), kStart).has_value());
  EXPECT_FALSE(schedule.NextBackoff(absl::CancelledError("cancelled"), kStart).has_value());
  EXPECT_FALSE(schedule.NextBackoff(absl::ResourceExhaustedError("quota"), kStart).has_value());
}

TEST(RetryScheduleTest, NoRetryStartsPastMaxElapsedOrTheDeadline) {
  RetrySchedule bounded(Policy(), kStart, kStart + absl::Hours(1));
  EXPECT_FALSE(bounded.NextBackoff(absl::UnavailableError("down"), kStart + absl::Seconds(10)).has_value());
  RetrySchedule deadline(Policy(), kStart, kStart + absl::Seconds(1));
  EXPECT_FALSE(deadline.NextBackoff(absl::UnavailableError("down"), kStart + absl::Seconds(1)).has_value());
  AgentRetryPolicy off = Policy();
  off.max_elapsed = absl::ZeroDuration();
  RetrySchedule disabled(off, kStart, kStart + absl::Hours(1));
  EXPECT_FALSE(disabled.NextBackoff(absl::UnavailableError("down"), kStart).has_value());
}

TEST(RetryScheduleTest, GivingUpKeepsTheCodeAndSaysHowOftenForHowLong) {
  RetrySchedule schedule(Policy(), kStart, kStart + absl::Hours(1));
  const absl::Status down = absl::UnavailableError("connection refused");
  EXPECT_EQ(schedule.GiveUp(down, kStart + absl::Seconds(1)), down);
  ASSERT_TRUE(schedule.NextBackoff(down, kStart).has_value());
  ASSERT_TRUE(schedule.NextBackoff(down, kStart).has_value());
  const absl::Status final = schedule.GiveUp(down, kStart + absl::Milliseconds(2500));
  EXPECT_TRUE(absl::IsUnavailable(final));
  EXPECT_EQ(final.message(), "connection refused (retried 2 times for 2.5s)");
}

}  // namespace
}  // namespace accelopt::orchestrator

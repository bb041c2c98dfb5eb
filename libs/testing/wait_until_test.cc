#include "libs/testing/wait_until.h"

#include <gtest/gtest.h>

#include <chrono>

namespace accelopt::testing {
namespace {

using namespace std::chrono_literals;

TEST(WaitUntilTest, ReturnsOkAsSoonAsTheConditionHolds) {
  int calls = 0;
  absl::Status status = WaitUntil([&] { return ++calls == 3; }, 10s);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(calls, 3);
}

TEST(WaitUntilTest, ChecksOnceEvenWithNoTimeLeft) {
  int calls = 0;
  EXPECT_TRUE(WaitUntil([&] { return ++calls > 0; }, 0ms).ok());
  EXPECT_EQ(calls, 1);
}

TEST(WaitUntilTest, ANeverTrueConditionIsDeadlineExceededNamingIt) {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = WaitUntil(
      [&] {
        ++calls;
        return false;
      },
      30ms, "metrics sample");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(status.message(), "metrics sample: not true after 30 ms");
  EXPECT_GE(calls, 2);  // the first call and the one at the deadline
}

}  // namespace
}  // namespace accelopt::testing

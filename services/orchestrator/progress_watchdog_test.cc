#include "services/orchestrator/progress_watchdog.h"

#include <gtest/gtest.h>

namespace accelopt::orchestrator {
namespace {

class ProgressWatchdogTest : public ::testing::Test {
 protected:
  absl::Time now_ = absl::UnixEpoch();
  ProgressWatchdog watchdog_{absl::Seconds(60), [this] { return now_; }};
};

TEST_F(ProgressWatchdogTest, QueuedWorkBesideIdleCapacityWithoutProgressStalls) {
  watchdog_.ReportLoad(/*queued=*/3, /*idle=*/2, /*workers=*/1);
  now_ += absl::Seconds(59);
  EXPECT_TRUE(watchdog_.Check().ok());
  now_ += absl::Seconds(1);
  absl::Status s = watchdog_.Check();
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_EQ(s.message(), "no progress for 1m with 3 profiles queued and 2 worker slots idle");
}

TEST_F(ProgressWatchdogTest, ProgressRestartsTheClock) {
  watchdog_.ReportLoad(3, 2, 1);
  now_ += absl::Seconds(50);
  watchdog_.ReportProgress();
  now_ += absl::Seconds(50);
  EXPECT_TRUE(watchdog_.Check().ok());
  now_ += absl::Seconds(10);
  EXPECT_FALSE(watchdog_.Check().ok());
  watchdog_.ReportProgress();
  EXPECT_TRUE(watchdog_.Check().ok());
}

TEST_F(ProgressWatchdogTest, BusyCapacityOrAnEmptyQueueIsNotAStall) {
  watchdog_.ReportLoad(/*queued=*/5, /*idle=*/0, /*workers=*/2);
  now_ += absl::Hours(1);
  EXPECT_TRUE(watchdog_.Check().ok());
  watchdog_.ReportLoad(/*queued=*/0, /*idle=*/4, /*workers=*/2);
  now_ += absl::Hours(1);
  EXPECT_TRUE(watchdog_.Check().ok());
  // The stall is timed from when work and idle capacity met, not from the first report.
  watchdog_.ReportLoad(1, 1, 1);
  now_ += absl::Seconds(30);
  watchdog_.ReportLoad(2, 1, 1);
  now_ += absl::Seconds(30);
  EXPECT_FALSE(watchdog_.Check().ok());
  watchdog_.ReportLoad(2, 0, 1);
  EXPECT_TRUE(watchdog_.Check().ok());
}

TEST_F(ProgressWatchdogTest, QueuedWorkWithNoWorkerInRotationStalls) {
  // Every profiler down: no slot is idle, but none exists either, so the queue waits with nothing to take it.
  watchdog_.ReportLoad(/*queued=*/4, /*idle=*/0, /*workers=*/0);
  now_ += absl::Seconds(60);
  absl::Status s = watchdog_.Check();
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_EQ(s.message(), "no progress for 1m with 4 profiles queued and no profiler worker in rotation");
  // A worker back in rotation, busy: not a stall.
  watchdog_.ReportLoad(4, 0, 1);
  EXPECT_TRUE(watchdog_.Check().ok());
  // No worker and nothing queued: not a stall either.
  watchdog_.ReportLoad(0, 0, 0);
  now_ += absl::Hours(1);
  EXPECT_TRUE(watchdog_.Check().ok());
}

}  // namespace
}  // namespace accelopt::orchestrator

#include "libs/storage/store_health.h"

#include <gtest/gtest.h>

namespace accelopt::storage {
namespace {

TEST(StoreHealthTest, ReportsTheWorstProblemAndHealsWhatCanHeal) {
  StoreHealth health;
  EXPECT_TRUE(health.Get().ok());
  health.SetDisk(absl::ResourceExhaustedError("disk full"));
  EXPECT_EQ(health.Get().code(), absl::StatusCode::kResourceExhausted);
  health.SetStopped(absl::UnavailableError("stopped"));
  EXPECT_TRUE(health.stopped());
  EXPECT_EQ(health.Get().message(), "stopped");
  health.Resumed();
  health.SetDisk(absl::OkStatus());
  EXPECT_FALSE(health.stopped());
  EXPECT_TRUE(health.Get().ok());
}

TEST(StoreHealthTest, CorruptionIsKeptAndTheFirstOneIsReported) {
  StoreHealth health;
  health.SetCorrupt(absl::DataLossError("first"));
  health.SetCorrupt(absl::DataLossError("second"));
  health.Resumed();
  EXPECT_EQ(health.Get().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(health.Get().message(), "first");
}

}  // namespace
}  // namespace accelopt::storage

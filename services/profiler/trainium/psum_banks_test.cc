#include "services/profiler/trainium/psum_banks.h"

#include "gtest/gtest.h"

namespace accelopt::trainium {
namespace {

TEST(PsumBanksTest, ReusesTheEarliestReleasedBank) {
  PsumBanks banks(2, 2048);
  EXPECT_DOUBLE_EQ(banks.Acquire(0, 2048), 0);
  EXPECT_DOUBLE_EQ(banks.Acquire(1, 512), 0);
  banks.Release(1, 300);
  banks.Release(0, 500);
  EXPECT_DOUBLE_EQ(banks.Acquire(2, 2048), 300);
  EXPECT_DOUBLE_EQ(banks.Acquire(3, 2048), 500);
  EXPECT_EQ(banks.overflows(), 0);
}

TEST(PsumBanksTest, LargeAllocationsTakeSeveralBanksAndOverflowIsCounted) {
  PsumBanks banks(4, 2048);
  EXPECT_DOUBLE_EQ(banks.Acquire(0, 4096), 0);  // two banks
  EXPECT_DOUBLE_EQ(banks.Acquire(1, 4096), 0);  // the other two
  EXPECT_DOUBLE_EQ(banks.Acquire(2, 2048), 0);  // none left: overflow, no stall
  EXPECT_EQ(banks.overflows(), 1);
  banks.Release(2, 1000);  // holds nothing: no effect
  banks.Release(0, 700);
  EXPECT_DOUBLE_EQ(banks.Acquire(3, 2048), 700);
}

}  // namespace
}  // namespace accelopt::trainium

#include "libs/core/splitmix64.h"

#include <gtest/gtest.h>

namespace accelopt::core {
namespace {

// Reference values of the published SplitMix64 generator started at state 0 (each call adds the increment
// once, so the n-th output is SplitMix64 of (n - 1) increments).
TEST(SplitMix64Test, MatchesTheReferenceSequence) {
  constexpr uint64_t kIncrement = 0x9e3779b97f4a7c15ULL;
  EXPECT_EQ(SplitMix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64(kIncrement), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64(2 * kIncrement), 0x06c45d188009454fULL);
}

TEST(SplitMix64Test, IsUsableAtCompileTime) {
  static_assert(SplitMix64(1) != SplitMix64(2));
  EXPECT_NE(SplitMix64(1), 1u);
}

}  // namespace
}  // namespace accelopt::core

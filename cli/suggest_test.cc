#include "cli/suggest.h"

#include <gtest/gtest.h>

namespace accelopt::cli {
namespace {

TEST(EditDistanceTest, CountsEditsAndNeighbourSwaps) {
  EXPECT_EQ(EditDistance("submit", "submit"), 0);
  EXPECT_EQ(EditDistance("sumbit", "submit"), 1);  // a swap
  EXPECT_EQ(EditDistance("submt", "submit"), 1);
  EXPECT_EQ(EditDistance("candidatez", "candidates"), 1);
  EXPECT_EQ(EditDistance("", "get"), 3);
  EXPECT_GT(EditDistance("watch", "list"), 2);
}

TEST(ClosestMatchTest, SuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> commands = {"up", "down", "status", "submit", "watch", "get", "list", "cancel"};
  EXPECT_EQ(ClosestMatch("sumbit", commands), "submit");
  EXPECT_EQ(ClosestMatch("stauts", commands), "status");
  EXPECT_EQ(ClosestMatch("lsit", commands), "list");
  EXPECT_EQ(ClosestMatch("deploy", commands), std::nullopt);
  EXPECT_EQ(ClosestMatch("x", commands), std::nullopt);  // one letter is no basis for a guess
  EXPECT_EQ(ClosestMatch("jsno", {"json", "wait"}), "json");
}

}  // namespace
}  // namespace accelopt::cli

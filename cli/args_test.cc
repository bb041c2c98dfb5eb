#include "cli/args.h"

#include <gtest/gtest.h>

namespace accelopt::cli {
namespace {

TEST(ArgsTest, ParsesValuesFlagsAndPositionals) {
  auto a = ParseArgs({"job.yaml", "--data-dir", "/d", "--json", "--seeds=3"}, {"data-dir", "seeds"}, {"json"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->Get("data-dir"), "/d");
  EXPECT_EQ(a->Get("seeds"), "3");
  EXPECT_TRUE(a->Has("json"));
  EXPECT_EQ(a->positional, std::vector<std::string>{"job.yaml"});
}

TEST(ArgsTest, UnknownOptionAndMissingValueAreNamed) {
  EXPECT_EQ(ParseArgs({"--bogus"}, {}, {}).status().message(), "unknown option --bogus");
  EXPECT_EQ(ParseArgs({"--data-dir"}, {"data-dir"}, {}).status().message(), "option --data-dir needs a value");
}

}  // namespace
}  // namespace accelopt::cli

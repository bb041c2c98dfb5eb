#include "services/memory/builtin_summarizer.h"

#include <gtest/gtest.h>

namespace accelopt::memory {
namespace {

SummaryOutput Summarize(const SummaryInput& input) {
  SummaryOutput out;
  BuiltinSummarizer().Summarize(input, [&](SummaryAnswer a) {
    ASSERT_TRUE(a.summary.ok());
    out = *a.summary;
  });
  return out;
}

SummaryInput Pair(bool regression) {
  SummaryInput in;
  in.slow_kernel = "a\nx = nl.load(t[i])\nb\n";
  in.fast_kernel = "a\nx_wide = nl.load(t)\nx = x_wide[i]\nb\n";
  in.speedup = 1.25;
  in.regression = regression;
  in.problem = "silu";
  in.plan.set_text("builtin: widen_dma site=S16\nwidened the load of x into one row load");
  in.plan.set_transformation("widen_dma");
  return in;
}

TEST(BuiltinSummarizerTest, WritesTheExperienceFromTheTransformationAndSpeedup) {
  SummaryOutput out = Summarize(Pair(false));
  EXPECT_EQ(out.title, "widen_dma: 1.25x faster");
  EXPECT_EQ(out.transformation, "widen_dma");
  EXPECT_EQ(out.model, "builtin");
  EXPECT_NE(out.description.find("widened the load of x"), std::string::npos);
  EXPECT_EQ(out.before_snippet, "x = nl.load(t[i])");
  EXPECT_EQ(out.after_snippet, "x_wide = nl.load(t)\nx = x_wide[i]");
  EXPECT_NE(out.summary.find("**widen_dma: 1.25x faster**"), std::string::npos);
}

TEST(BuiltinSummarizerTest, RegressionsAreAdviceAgainst) {
  SummaryOutput out = Summarize(Pair(true));
  EXPECT_EQ(out.title.rfind("Avoid widen_dma here", 0), 0u) << out.title;
}

TEST(BuiltinSummarizerTest, IdenticalKernelsHaveNothingToSay) {
  SummaryInput in = Pair(false);
  in.fast_kernel = in.slow_kernel;
  EXPECT_TRUE(Summarize(in).no_optimization);
}

TEST(ChangedLinesTest, KeepsOnlyTheChangedRegionCutToMaxLines) {
  auto [a, b] = ChangedLines("h\n1\n2\n3\nt", "h\n9\nt", 2);
  EXPECT_EQ(a, "1\n2\n...");
  EXPECT_EQ(b, "9");
}

}  // namespace
}  // namespace accelopt::memory

#include "libs/report/job_report_html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "libs/report/report_fixture.h"

namespace accelopt::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(JobReportHtml, IsOneSelfContainedPageWithItsCharts) {
  auto f = testing::SmallJob();
  const std::string html = RenderJobReportHtml(f.job, f.candidates, f.events);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  // Every http(s) mention is the SVG namespace, which browsers never fetch.
  EXPECT_EQ(Count(html, "http"), Count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  for (const char* title : {"Latency over iterations", "Speedup over the baseline", "Percentage of peak",
                            "Verdicts per iteration", "Tokens by agent", "Cost by agent",
                            "Tokens over iterations (cumulative)", "Cost over iterations (cumulative)"}) {
    EXPECT_THAT(html, HasSubstr(title));
  }
  EXPECT_THAT(html, HasSubstr("roofline (100% of peak)"));
  EXPECT_THAT(html, HasSubstr("Tile the loads to fill the partitions"));
}

TEST(JobReportHtml, UsageOverIterationsPlotsEachAgentsCumulativeTokens) {
  auto f = testing::SmallJob();
  const std::string html = RenderJobReportHtml(f.job, f.candidates, f.events);
  // Tooltips of the cumulative token points: planner 750 after iteration 1, 1500 at the end (iteration 2).
  EXPECT_THAT(html, HasSubstr("planner: x=1, y=750"));
  EXPECT_THAT(html, HasSubstr("planner: x=2, y=1.5k"));
  EXPECT_THAT(html, HasSubstr("executor: x=2, y=3.3k"));
  // Without iteration events (an older job) the section keeps its totals and draws no empty charts.
  const std::string without = RenderJobReportHtml(f.job, f.candidates, {});
  EXPECT_THAT(without, HasSubstr("Tokens by agent"));
  EXPECT_THAT(without, Not(HasSubstr("Tokens over iterations")));
  // Nor for a job that spent no tokens (builtin agents): flat lines at zero say nothing.
  v1::Job builtin = f.job;
  for (auto& [agent, usage] : *builtin.mutable_usage_by_agent()) usage.Clear();
  EXPECT_THAT(RenderJobReportHtml(builtin, f.candidates, f.events), Not(HasSubstr("Tokens over iterations")));
}

TEST(JobReportHtml, TreeHasEveryCandidateColouredByVerdictAndTheLineageRinged) {
  auto f = testing::SmallJob();
  const std::string html = RenderJobReportHtml(f.job, f.candidates, f.events);
  EXPECT_EQ(Count(html, "<circle class=\"node"), f.candidates.size());
  EXPECT_THAT(html, HasSubstr("data-verdict=\"INCORRECT\" cx"));
  EXPECT_THAT(html, HasSubstr("fill=\"" + VerdictColor("TIMEOUT") + "\""));
  EXPECT_EQ(Count(html, "class=\"node best-lineage\""), 3u);  // c0 -> c1 -> c4
  EXPECT_EQ(Count(html, "<line class=\"lineage\""), 2u);      // c0-c1 and c1-c4
  EXPECT_EQ(Count(html, "<line class=\"edge\""), 3u);         // c0-c2, c0-c3, c1-c5
}

TEST(JobReportHtml, EscapesTextAndShowsTheDiffOfTheBestKernel) {
  auto f = testing::SmallJob();
  const std::string html = RenderJobReportHtml(f.job, f.candidates, f.events);
  EXPECT_THAT(html, HasSubstr("tile &lt;loads&gt; &amp; &quot;fuse&quot;"));
  EXPECT_THAT(html, Not(HasSubstr("<loads>")));
  EXPECT_THAT(html, HasSubstr("<span class=\"del\">-     y = load(x)</span>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"add\">+     y = fuse(y)</span>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"same\">  def kernel(x):</span>"));
}

TEST(JobReportHtml, SameJobGivesTheSameBytesWhateverTheCandidateOrder) {
  auto f = testing::SmallJob();
  const std::string first = RenderJobReportHtml(f.job, f.candidates, f.events);
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(f.candidates.begin(), f.candidates.end(), rng);
    EXPECT_EQ(RenderJobReportHtml(f.job, f.candidates, f.events), first);
  }
}

TEST(JobReportHtml, JobWithoutCandidatesStillRenders) {
  v1::Job job;
  job.set_job_id("empty");
  const std::string html = RenderJobReportHtml(job, {}, {});
  EXPECT_THAT(html, HasSubstr("No correct kernel yet."));
  EXPECT_THAT(html, HasSubstr("no data"));
  EXPECT_THAT(html, HasSubstr("</html>"));
}

}  // namespace
}  // namespace accelopt::report

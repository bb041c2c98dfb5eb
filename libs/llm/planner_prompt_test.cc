#include "libs/llm/planner_prompt.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

TEST(FormatProfileTest, ListsLatencyThenCountersInProtoOrder) {
  v1::ProfileResult profile;
  profile.mutable_latency()->set_mean_ms(1.25);
  // Set out of order; absent fields stay out.
  profile.mutable_counters()->set_gpsimd_engine_active_time_percent(0.5);
  profile.mutable_counters()->set_hbm_read_bytes(1048576);
  profile.mutable_counters()->set_mm_arithmetic_intensity(12.3456789);
  profile.mutable_counters()->set_spill_save_bytes(0);
  EXPECT_EQ(FormatProfile(profile),
            "latency_ms: 1.25\n"
            "hbm_read_bytes: 1048576\n"
            "spill_save_bytes: 0\n"
            "mm_arithmetic_intensity: 12.3457\n"
            "gpsimd_engine_active_time_percent: 0.5\n");
}

TEST(FormatProfileTest, AllSixteenFieldsAppearInOrder) {
  v1::ProfileResult profile;
  const auto* descriptor = v1::ProfileCounters::descriptor();
  ASSERT_EQ(descriptor->field_count(), 16);
  for (int i = descriptor->field_count() - 1; i >= 0; --i) {
    profile.mutable_counters()->GetReflection()->SetDouble(profile.mutable_counters(), descriptor->field(i), i);
  }
  std::string text = FormatProfile(profile);
  size_t last = text.find("latency_ms: unknown");
  ASSERT_EQ(last, 0u);
  for (int i = 0; i < descriptor->field_count(); ++i) {
    size_t at = text.find(descriptor->field(i)->name() + ": " + std::to_string(i) + "\n");
    ASSERT_NE(at, std::string::npos) << descriptor->field(i)->name();
    EXPECT_GT(at, last);
    last = at;
  }
}

TEST(FormatExperiencesTest, EmptyListRendersNothing) { EXPECT_EQ(FormatExperiences({}), ""); }

TEST(FormatExperiencesTest, KeepsOrderAndMarksRegressions) {
  google::protobuf::RepeatedPtrField<v1::Experience> list;
  v1::Experience* newest = list.Add();
  newest->set_title("Hoist loads");
  newest->set_summary("**Hoist loads**\nMove them out.");
  newest->set_speedup(1.3);
  v1::Experience* bad = list.Add();
  bad->set_title("Split the K loop");
  bad->set_description("Merging the loops back restores speed.");
  bad->set_speedup(1.5);
  bad->set_regression(true);
  std::string text = FormatExperiences(list);
  EXPECT_NE(text.find("## Experiences"), std::string::npos);
  size_t first = text.find("### 1. Hoist loads (1.30x faster)\n**Hoist loads**\nMove them out.");
  size_t second = text.find(
      "### 2. REGRESSION: Split the K loop (the attempted change was 1.50x slower)\n"
      "Merging the loops back restores speed.");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
}

TEST(FormatExperiencesTest, EachBatchListsTheBestPositiveFirstThenTheWorstRegression) {
  google::protobuf::RepeatedPtrField<v1::Experience> list;
  auto add = [&](const std::string& title, int iteration, double speedup, bool regression) {
    v1::Experience* e = list.Add();
    e->set_title(title);
    e->set_speedup(speedup);
    e->set_regression(regression);
    e->mutable_provenance()->set_job_id("job");
    e->mutable_provenance()->set_iteration(iteration);
  };
  // Newest batch (iteration 2) first, as the memory service returns it, best positive last inside it.
  add("small", 2, 1.1, false);
  add("mild-regression", 2, 1.2, true);
  add("big-regression", 2, 2.0, true);
  add("best", 2, 1.9, false);
  add("old", 1, 1.05, false);
  add("old-best", 1, 1.5, false);
  std::vector<std::string> titles;
  for (const v1::Experience* e : OrderExperiences(list)) titles.push_back(e->title());
  EXPECT_EQ(titles,
            (std::vector<std::string>{"best", "small", "big-regression", "mild-regression", "old-best", "old"}));
  const std::string text = FormatExperiences(list);
  EXPECT_LT(text.find("### 1. best"), text.find("### 2. small")) << text;
}

}  // namespace
}  // namespace accelopt::llm

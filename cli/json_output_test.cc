#include "cli/json_output.h"

#include <gtest/gtest.h>

#include "accelopt/v1/job.pb.h"

namespace accelopt::cli {
namespace {

TEST(JsonOutputTest, ProtoFieldsKeepTheirNamesWithNumbersShortEnumsAndNulls) {
  v1::Job job;
  job.set_job_id("j1");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_best_peak_percent(42.5);
  (*job.mutable_candidates())["OK"] = 3;
  job.mutable_stats()->set_profiles_run(9000000000);
  job.mutable_spec()->set_seed(18446744073709551615u);
  job.mutable_spec()->set_device(v1::DEVICE_SIM_TRN2);

  const nlohmann::json json = ProtoToJson(job);
  EXPECT_EQ(json.at("job_id"), "j1");
  EXPECT_EQ(json.at("state"), "SUCCEEDED");
  EXPECT_TRUE(json.at("stop_reason").is_null());
  EXPECT_EQ(json.at("best_peak_percent"), 42.5);
  EXPECT_TRUE(json.at("baseline_peak_percent").is_null());
  EXPECT_EQ(json.at("candidates").at("OK"), 3);
  EXPECT_EQ(json.at("stats").at("profiles_run").get<int64_t>(), 9000000000);
  EXPECT_EQ(json.at("spec").at("seed").get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(json.at("spec").at("device"), "SIM_TRN2");
  // Defaults are present; unset sub-messages are not.
  EXPECT_EQ(json.at("best_speedup"), 0);
  EXPECT_EQ(json.at("message"), "");
  EXPECT_FALSE(json.contains("baseline"));
}

TEST(JsonOutputTest, StructKeysComeOutSortedWhateverTheInsertionOrder) {
  v1::ModelSpec forward;
  v1::ModelSpec backward;
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& key : keys) (*forward.mutable_extra_body()->mutable_fields())[key].set_number_value(1);
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    (*backward.mutable_extra_body()->mutable_fields())[*it].set_number_value(1);
  }
  const std::string text = JsonText(ProtoToJson(forward), /*pretty=*/false);
  EXPECT_EQ(text, JsonText(ProtoToJson(backward), /*pretty=*/false));
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  size_t last = 0;
  for (const std::string& key : sorted) {
    const size_t at = text.find("\"" + key + "\"");
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key << " out of order in " << text;
    last = at;
  }
}

TEST(JsonOutputTest, TextIsCompactOrIndented) {
  const nlohmann::json value = {{"b", 1}, {"a", {{"c", nullptr}}}};
  EXPECT_EQ(JsonText(value, /*pretty=*/false), R"({"a":{"c":null},"b":1})");
  EXPECT_EQ(JsonText(value, /*pretty=*/true), "{\n  \"a\": {\n    \"c\": null\n  },\n  \"b\": 1\n}");
}

}  // namespace
}  // namespace accelopt::cli

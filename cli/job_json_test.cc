#include "cli/job_json.h"

#include <gtest/gtest.h>

namespace accelopt::cli {
namespace {

v1::Job FinishedJob() {
  v1::Job job;
  job.set_job_id("job-1");
  job.mutable_spec()->set_name("softmax");
  job.mutable_spec()->mutable_search()->set_iterations(3);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_stop_reason(v1::STOP_REASON_ITERATIONS_DONE);
  job.set_iterations_done(3);
  job.set_baseline_latency_ms(2.0);
  job.set_best_candidate_id("c-3");
  job.set_best_latency_ms(1.0);
  job.set_best_speedup(2.0);
  job.set_best_peak_percent(61.5);
  (*job.mutable_candidates())["OK"] = 7;
  (*job.mutable_candidates())["INCORRECT"] = 1;
  job.mutable_usage()->set_prompt_tokens(100);
  job.mutable_usage()->set_completion_tokens(20);
  job.mutable_usage()->set_cost_usd(0.5);
  v1::TokenUsage& planner = (*job.mutable_usage_by_agent())["planner"];
  planner.set_prompt_tokens(60);
  planner.set_completion_tokens(5);
  planner.set_requests(4);
  job.mutable_stats()->set_profiles_run(8);
  job.mutable_stats()->set_wall_seconds(12.5);
  job.set_experiences_added(2);
  return job;
}

TEST(JobJsonTest, KeepsEveryKeyOfTheEarlierFormatWithItsValue) {
  const nlohmann::json json = JobJson(FinishedJob());
  EXPECT_EQ(json.at("job_id"), "job-1");
  EXPECT_EQ(json.at("name"), "softmax");
  EXPECT_EQ(json.at("state"), "SUCCEEDED");
  EXPECT_EQ(json.at("stop_reason"), "ITERATIONS_DONE");
  EXPECT_EQ(json.at("message"), "");
  EXPECT_EQ(json.at("baseline_latency_ms"), 2.0);
  EXPECT_TRUE(json.at("baseline_peak_percent").is_null());
  EXPECT_EQ(json.at("best_candidate_id"), "c-3");
  EXPECT_EQ(json.at("best_latency_ms"), 1.0);
  EXPECT_EQ(json.at("best_speedup"), 2.0);
  EXPECT_EQ(json.at("best_peak_percent"), 61.5);
  EXPECT_EQ(json.at("iterations_done"), 3);
  EXPECT_EQ(json.at("iterations"), 3);
  EXPECT_EQ(json.at("experiences_added"), 2);
  EXPECT_EQ(json.at("candidates"), (nlohmann::json{{"INCORRECT", 1}, {"OK", 7}}));
  EXPECT_EQ(json.at("tokens"), 120);
  EXPECT_EQ(json.at("prompt_tokens"), 100);
  EXPECT_EQ(json.at("completion_tokens"), 20);
  EXPECT_EQ(json.at("cost_usd"), 0.5);
  const nlohmann::json& agent = json.at("usage_by_agent").at("planner");
  EXPECT_EQ(agent.at("tokens"), 65);
  EXPECT_EQ(agent.at("requests"), 4);
  EXPECT_EQ(agent.at("cost_usd"), 0);
  const nlohmann::json& stats = json.at("stats");
  EXPECT_EQ(stats.at("profiles_run"), 8);
  EXPECT_EQ(stats.at("dispatch_retries"), 0);
  EXPECT_EQ(stats.at("device_seconds"), 0);
  EXPECT_EQ(stats.at("wall_seconds"), 12.5);
}

TEST(JobJsonTest, CarriesTheApiFieldsAndAStoppedStateOnlyOnceStopped) {
  v1::Job job;
  job.set_job_id("job-2");
  job.set_state(v1::JOB_STATE_QUEUED);
  job.mutable_spec()->set_device(v1::DEVICE_SIM_TRN1);
  const nlohmann::json json = JobJson(job);
  EXPECT_EQ(json.at("state"), "QUEUED");
  EXPECT_TRUE(json.at("stop_reason").is_null());
  EXPECT_EQ(json.at("spec").at("device"), "SIM_TRN1");
  EXPECT_EQ(json.at("stats").at("profiles_run"), 0);
  EXPECT_EQ(json.at("usage").at("prompt_tokens"), 0);
  EXPECT_EQ(json.at("usage_by_agent"), nlohmann::json::object());
}

TEST(JobJsonTest, LineageStartsAtTheBaselineWithoutSources) {
  v1::JobReport report;
  v1::Candidate* base = report.add_lineage();
  base->set_candidate_id("c-0");
  base->mutable_kernel()->set_source("import nki\n");
  base->mutable_kernel()->set_sha256("aa");
  base->mutable_result()->set_verdict(v1::VERDICT_OK);
  base->mutable_result()->mutable_latency()->set_mean_ms(2.0);
  v1::Candidate* best = report.add_lineage();
  best->set_candidate_id("c-1");
  best->set_parent_id("c-0");
  best->set_iteration(1);
  best->mutable_plan()->set_title("fuse");
  best->set_speedup_vs_parent(1.5);
  best->mutable_result()->set_peak_percent(30);
  const nlohmann::json lineage = LineageJson(report);
  ASSERT_EQ(lineage.size(), 2u);
  EXPECT_TRUE(lineage[0].at("parent_id").is_null());
  EXPECT_EQ(lineage[0].at("speedup_vs_parent"), 1.0);
  EXPECT_EQ(lineage[0].at("verdict"), "OK");
  EXPECT_EQ(lineage[0].at("latency_ms"), 2.0);
  EXPECT_TRUE(lineage[0].at("peak_percent").is_null());
  EXPECT_EQ(lineage[0].at("kernel_sha256"), "aa");
  EXPECT_EQ(lineage[1].at("parent_id"), "c-0");
  EXPECT_EQ(lineage[1].at("plan_title"), "fuse");
  EXPECT_EQ(lineage[1].at("speedup_vs_parent"), 1.5);
  EXPECT_EQ(lineage[1].at("peak_percent"), 30);
  EXPECT_EQ(lineage.dump().find("import nki"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::cli

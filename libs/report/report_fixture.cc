#include "libs/report/report_fixture.h"

#include <string>

namespace accelopt::report::testing {
namespace {

v1::Candidate Make(const std::string& id, int iteration, const std::string& parent, int64_t ordinal,
                   v1::Verdict verdict, double latency_ms, const std::string& source) {
  v1::Candidate c;
  c.set_candidate_id(id);
  c.set_job_id("job-1");
  c.set_iteration(iteration);
  c.set_parent_id(parent);
  c.set_ordinal(ordinal);
  c.mutable_kernel()->set_source(source);
  c.mutable_plan()->set_title("plan for " + id);
  c.mutable_result()->set_verdict(verdict);
  if (verdict == v1::VERDICT_OK) {
    c.mutable_result()->mutable_latency()->set_mean_ms(latency_ms);
    c.mutable_result()->set_peak_percent(200.0 / latency_ms);  // roofline latency: 2 ms
    c.set_speedup_vs_baseline(10.0 / latency_ms);
  }
  return c;
}

}  // namespace

JobFixture SmallJob() {
  JobFixture f;
  const std::string base = "def kernel(x):\n    y = load(x)\n    return y\n";
  const std::string better = "def kernel(x):\n    y = load_tiled(x)\n    return y\n";
  const std::string best = "def kernel(x):\n    y = load_tiled(x)\n    y = fuse(y)\n    return y\n";
  f.candidates = {Make("c0", 0, "", 0, v1::VERDICT_OK, 10, base),
                  Make("c1", 1, "c0", 1, v1::VERDICT_OK, 8, better),
                  Make("c2", 1, "c0", 2, v1::VERDICT_INCORRECT, 0, better),
                  Make("c3", 1, "c0", 3, v1::VERDICT_COMPILE_ERROR, 0, better),
                  Make("c4", 2, "c1", 4, v1::VERDICT_OK, 5, best),
                  Make("c5", 2, "c1", 5, v1::VERDICT_TIMEOUT, 0, best)};
  f.candidates[1].mutable_plan()->set_title("tile <loads> & \"fuse\"");
  f.candidates[1].set_speedup_vs_parent(1.25);
  f.candidates[4].set_speedup_vs_parent(1.6);
  v1::Job& job = f.job;
  job.set_job_id("job-1");
  job.mutable_spec()->set_name("silu-demo");
  job.mutable_spec()->mutable_problem()->set_name("silu");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_iterations_done(2);
  job.set_baseline_latency_ms(10);
  job.set_baseline_peak_percent(20);
  job.set_best_candidate_id("c4");
  job.set_best_latency_ms(5);
  job.set_best_speedup(2);
  job.set_best_peak_percent(40);
  v1::TokenUsage planner, executor;
  planner.set_prompt_tokens(1200), planner.set_completion_tokens(300), planner.set_cost_usd(0.012);
  executor.set_prompt_tokens(2400), executor.set_completion_tokens(900), executor.set_cost_usd(0.03);
  (*job.mutable_usage_by_agent())["planner"] = planner;
  (*job.mutable_usage_by_agent())["executor"] = executor;
  v1::JobEvent first, experience, second;
  first.mutable_iteration_finished()->set_iteration(1);
  v1::TokenUsage planner_1, executor_1;
  planner_1.set_prompt_tokens(600), planner_1.set_completion_tokens(150), planner_1.set_cost_usd(0.006);
  executor_1.set_prompt_tokens(800), executor_1.set_completion_tokens(300), executor_1.set_cost_usd(0.01);
  (*first.mutable_iteration_finished()->mutable_usage_by_agent())["planner"] = planner_1;
  (*first.mutable_iteration_finished()->mutable_usage_by_agent())["executor"] = executor_1;
  v1::ExperienceAdded* e = experience.mutable_experience_added();
  e->set_experience_id("e1");
  e->set_title("Tile the loads to fill the partitions");
  e->set_speedup(1.25);
  second.mutable_iteration_finished()->set_iteration(2);
  *second.mutable_iteration_finished()->mutable_usage_by_agent() = job.usage_by_agent();
  f.events = {first, experience, second};
  return f;
}

}  // namespace accelopt::report::testing

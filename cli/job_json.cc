#include "cli/job_json.h"

#include "cli/json_output.h"
#include "libs/core/enum_name.h"

namespace accelopt::cli {
namespace {

nlohmann::json NumberOrNull(bool has, double value) { return has ? nlohmann::json(value) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json JobJson(const v1::Job& job) {
  v1::Job complete = job;
  complete.mutable_usage();
  complete.mutable_stats();
  nlohmann::json json = ProtoToJson(complete);
  const v1::TokenUsage& usage = job.usage();
  json["name"] = job.spec().name();
  json["iterations"] = job.spec().search().iterations();
  json["tokens"] = usage.prompt_tokens() + usage.completion_tokens();
  json["prompt_tokens"] = usage.prompt_tokens();
  json["completion_tokens"] = usage.completion_tokens();
  json["cost_usd"] = usage.cost_usd();
  for (const auto& [agent, agent_usage] : job.usage_by_agent()) {
    json["usage_by_agent"][agent]["tokens"] = agent_usage.prompt_tokens() + agent_usage.completion_tokens();
  }
  return json;
}

nlohmann::json LineageJson(const v1::JobReport& report) {
  nlohmann::json lineage = nlohmann::json::array();
  for (const v1::Candidate& c : report.lineage()) {
    const bool baseline = c.parent_id().empty();
    lineage.push_back({
        {"candidate_id", c.candidate_id()},
        {"iteration", c.iteration()},
        {"parent_id", baseline ? nlohmann::json(nullptr) : nlohmann::json(c.parent_id())},
        {"plan_index", c.plan_index()},
        {"sample_index", c.sample_index()},
        {"plan_title", c.plan().title()},
        {"plan", c.plan().text()},
        {"verdict", core::ShortEnumName(c.result().verdict())},
        {"latency_ms", c.result().latency().mean_ms()},
        {"speedup_vs_parent", baseline ? 1.0 : c.speedup_vs_parent()},
        {"speedup_vs_baseline", c.speedup_vs_baseline()},
        {"peak_percent", NumberOrNull(c.result().has_peak_percent(), c.result().peak_percent())},
        {"kernel_sha256", c.kernel().sha256()},
    });
  }
  return lineage;
}

}  // namespace accelopt::cli

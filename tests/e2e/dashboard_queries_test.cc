// A real Prometheus scrapes a whole cluster through a job with LLM agents (the double) and evaluates every
// query of the Grafana dashboard over the run (as Grafana would, a range query) and every alert rule
// (loaded as a rule file): each must be valid, and each dashboard query must return data.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "libs/core/file.h"
#include "libs/testing/child_process.h"
#include "libs/testing/http_get.h"
#include "tests/e2e/e2e_cluster.h"

namespace accelopt::e2e {
namespace {

using namespace std::chrono_literals;
using google::protobuf::Struct;
using google::protobuf::Value;

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += absl::StrFormat("%%%02X", ch);
    }
  }
  return out;
}

absl::StatusOr<Struct> GetJson(const std::string& address, const std::string& target) {
  auto body = testing::HttpGet(address, target);
  if (!body.ok()) return body.status();
  Struct json;
  if (!google::protobuf::util::JsonStringToMessage(*body, &json).ok()) {
    return absl::InternalError(absl::StrCat("not JSON: ", *body));
  }
  return json;
}

const Value& Field(const Struct& s, const std::string& name) {
  static const Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}

// The value of the first series `expr` returns now, or -1 when it returns none (or Prometheus does not answer).
double QueryValue(const std::string& prometheus, const std::string& expr) {
  auto json = GetJson(prometheus, "/api/v1/query?query=" + UrlEncode(expr));
  if (!json.ok()) return -1;
  const auto& result = Field(Field(*json, "data").struct_value(), "result").list_value();
  if (result.values_size() == 0) return -1;
  const auto& sample = Field(result.values(0).struct_value(), "value").list_value();
  return sample.values_size() == 2 ? std::stod(sample.values(1).string_value()) : -1;
}

// Polls until `expr`'s first value reaches `at_least`; false after 30 s.
bool WaitForValue(const std::string& prometheus, const std::string& expr, double at_least) {
  for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(100ms)) {
    if (QueryValue(prometheus, expr) >= at_least) return true;
  }
  return false;
}

// The planner proposes PLAN-A, the executor answers with the baseline kernel made unique per request, the
// summarizer writes one experience (rules as in e2e_test.cc); every answer has usage, so tokens and cost count.
std::string Script() {
  const std::string kernel = *core::ReadFile(kSourceDir + "/examples/silu/kernel.py");
  const std::string usage = "\"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": 200}";
  auto rule = [&](const std::string& match, const std::string& content) {
    return absl::StrCat("{\"match\": ", JsonString(match),
                        ", \"times\": 0, \"reply\": {\"content\": ", JsonString(content), ", ", usage, "}}");
  };
  return absl::StrCat("{\"rules\": [", rule("you propose how to make it", "**PLAN-A**: keep the kernel"), ", ",
                      rule("PLAN-A", absl::StrCat("```python\n# request {{request_index}}\n", kernel, "```\n")), ", ",
                      rule("learn from measured experiments", "**Nothing learned**\nThe kernels are the same."),
                      "], \"default\": {\"content\": ", JsonString("**PLAN-A**: keep the kernel"), "}}");
}

v1::JobSpec Spec() {
  v1::JobSpec spec = ExampleJobSpec("silu", "dashboard", 3, "openai");
  spec.mutable_search()->set_iterations(2);
  spec.mutable_search()->set_beam_width(1);
  spec.mutable_search()->set_plans_per_candidate(2);
  spec.mutable_profile()->set_timeout_seconds(60);
  return spec;
}

TEST(DashboardQueriesTest, EveryDashboardQueryReturnsDataAndEveryAlertEvaluates) {
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/prometheus")) << "install the prometheus package (make deps)";
  ClusterOptions options;
  options.llm_script = Script();
  auto cluster = E2eCluster::Start("dashboard", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  const double start = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());

  // One target per process, labelled as the Kubernetes scrape config labels pods (job = app name, pod).
  const std::string rules = kSourceDir + "/deploy/observability/prometheus/accelopt-rules.yml";
  std::string config = absl::StrCat("global: {scrape_interval: 500ms, scrape_timeout: 500ms, ",
                                    "evaluation_interval: 1s}\nrule_files: ['", rules, "']\nscrape_configs:\n");
  for (const auto& [process, address] : c.metrics_addresses()) {
    const std::string job = process.rfind("profiler-", 0) == 0 ? "profiler" : process;
    absl::StrAppend(&config, "  - job_name: ", process, "\n    static_configs: [{targets: ['", address,
                    "'], labels: {job: ", job, ", pod: ", process, "}}]\n");
  }
  std::ofstream(c.dir() + "/prometheus.yml") << config;
  const std::string web = absl::StrCat("127.0.0.1:", testing::PickFreePort());
  auto prometheus =
      testing::ChildProcess::Start({"/usr/bin/prometheus", "--config.file=" + c.dir() + "/prometheus.yml",
                                    "--storage.tsdb.path=" + c.dir() + "/tsdb", "--web.listen-address=" + web},
                                   c.dir() + "/prometheus.log");
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();

  // Every target scraped twice before the job starts, so that each series the job creates has samples on
  // both sides of its changes.
  const std::string scrapes = "min(count_over_time(up[1h]))";
  ASSERT_TRUE(WaitForValue(web, "min(up)", 1) && WaitForValue(web, scrapes, 2))
      << *core::ReadFile(c.dir() + "/prometheus.log");

  grpc::ClientContext submit_ctx;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = Spec();
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE(c.jobs().SubmitJob(&submit_ctx, request, &submitted).ok());
  const std::string id = submitted.job().job_id();
  v1::Job job;
  for (auto deadline = std::chrono::steady_clock::now() + 180s; std::chrono::steady_clock::now() < deadline;) {
    grpc::ClientContext ctx;
    v1::GetJobRequest get;
    get.set_job_id(id);
    if (c.jobs().GetJob(&ctx, get, &job).ok() && job.state() != v1::JOB_STATE_QUEUED &&
        job.state() != v1::JOB_STATE_RUNNING) {
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.DebugString() << c.LogTail("orchestrator");

  // Prometheus has scraped the finished job once a finished-jobs counter is above 0; two more scrapes give
  // the series created last a second sample.
  ASSERT_TRUE(WaitForValue(web, "sum(accelopt_jobs_finished_total)", 1))
      << *core::ReadFile(c.dir() + "/prometheus.log");
  ASSERT_TRUE(WaitForValue(web, scrapes, QueryValue(web, scrapes) + 2));
  const double end = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());

  auto dashboard_text = core::ReadFile(kSourceDir + "/deploy/observability/grafana/accelopt-dashboard.json");
  ASSERT_TRUE(dashboard_text.ok());
  Struct dashboard;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*dashboard_text, &dashboard).ok());
  int queries = 0;
  for (const Value& panel : Field(dashboard, "panels").list_value().values()) {
    const std::string title = Field(panel.struct_value(), "title").string_value();
    for (const Value& target : Field(panel.struct_value(), "targets").list_value().values()) {
      const std::string expr = Field(target.struct_value(), "expr").string_value();
      auto json = GetJson(
          web, absl::StrFormat("/api/v1/query_range?query=%s&start=%.3f&end=%.3f&step=1", UrlEncode(expr), start, end));
      ASSERT_TRUE(json.ok()) << title << ": " << expr << ": " << json.status();
      EXPECT_EQ(Field(*json, "status").string_value(), "success") << title << ": " << expr;
      EXPECT_GT(Field(Field(*json, "data").struct_value(), "result").list_value().values_size(), 0)
          << "no data: " << title << ": " << expr;
      ++queries;
    }
  }
  EXPECT_GE(queries, 15);

  // Every alert rule was loaded and evaluates without error (health "ok"; "unknown" until first evaluated).
  int alerts = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(500ms)) {
    auto json = GetJson(web, "/api/v1/rules");
    ASSERT_TRUE(json.ok()) << json.status();
    alerts = 0;
    bool all_evaluated = true;
    for (const Value& group : Field(Field(*json, "data").struct_value(), "groups").list_value().values()) {
      for (const Value& rule : Field(group.struct_value(), "rules").list_value().values()) {
        const std::string health = Field(rule.struct_value(), "health").string_value();
        EXPECT_NE(health, "err") << Field(rule.struct_value(), "name").string_value() << ": "
                                 << Field(rule.struct_value(), "lastError").string_value();
        all_evaluated &= health == "ok";
        ++alerts;
      }
    }
    if (all_evaluated && alerts > 0) break;
  }
  EXPECT_EQ(alerts, 10);
}

}  // namespace
}  // namespace accelopt::e2e

// `accelopt suite import-nkibench` then `accelopt suite run` against a live cluster, as a user would: an
// NKIBench-shaped fixture of our own (cli/testdata/nkibench) becomes a suite, runs on the builtin optimizer and
// the simulator, and writes the table and the HTML; running the command again resumes and writes the same results.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>

#include "absl/strings/match.h"
#include "libs/core/file.h"
#include "libs/testing/child_process.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/e2e_cluster.h"

namespace accelopt::e2e {
namespace {

using namespace std::chrono_literals;

// Runs the CLI to completion; returns (exit code, output).
std::pair<int, std::string> Accelopt(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {kBinDir + "/accelopt"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = testing::ChildProcess::Start(argv, log);
  if (!p.ok()) return {-1, std::string(p.status().message())};
  std::optional<int> status = p->WaitForExit(600s);
  if (!status.has_value() || !WIFEXITED(*status)) return {-1, p->Output()};
  return {WEXITSTATUS(*status), p->Output()};
}

TEST(SuiteE2eTest, ImportedNkiBenchFixtureRunsAsASuiteAndResumes) {
  auto cluster = E2eCluster::Start("suite", ClusterOptions{});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  const std::string suite_dir = c.dir() + "/nkibench-suite";
  auto [imported, import_output] = Accelopt(
      {"suite", "import-nkibench", kSourceDir + "/cli/testdata/nkibench", "--out", suite_dir}, c.dir() + "/import.log");
  ASSERT_EQ(imported, 0) << import_output;

  const std::string results = c.dir() + "/results";
  const std::vector<std::string> run = {"suite", "run",      suite_dir + "/suite.yaml", "--out",
                                        results, "--server", c.orchestrator_address()};
  auto [code, output] = Accelopt(run, c.dir() + "/run.log");
  ASSERT_EQ(code, 0) << output << c.LogTail("orchestrator");
  for (const char* file : {"results.md", "results.json", "report.html", "state.json"}) {
    EXPECT_TRUE(std::filesystem::exists(results + "/" + file)) << file;
  }
  auto table = core::ReadFile(results + "/results.md");
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(absl::StrContains(*table, "silu_2")) << *table;
  EXPECT_TRUE(absl::StrContains(*table, "mystery_0")) << *table;
  auto json_text = core::ReadFile(results + "/results.json");
  ASSERT_TRUE(json_text.ok());
  const nlohmann::json json = nlohmann::json::parse(*json_text);
  ASSERT_EQ(json.at("rows").size(), 2u) << *json_text;
  EXPECT_EQ(json.at("summary").at("problems"), 2);
  for (const nlohmann::json& problem : json.at("rows")) {
    EXPECT_EQ(problem.at("state"), "SUCCEEDED") << problem.dump();
    EXPECT_GT(problem.at("baseline_ms").get<double>(), 0) << problem.dump();
    EXPECT_GE(problem.at("speedup").get<double>(), 1.0) << problem.dump();
  }
  // silu has the paper's roofline formulas, the mystery problem none: % of peak only where it can be known.
  for (const nlohmann::json& problem : json.at("rows")) {
    EXPECT_EQ(problem.at("peak_before").is_null(), problem.at("problem") == "mystery_0") << problem.dump();
  }
  auto html = core::ReadFile(results + "/report.html");
  ASSERT_TRUE(html.ok());
  EXPECT_TRUE(absl::StrContains(*html, "<svg")) << "the HTML has its charts";

  // Again, with --json: the jobs are followed, not submitted twice, the results are the same bytes, and the
  // last line printed is results.json on one line.
  std::vector<std::string> run_json = run;
  run_json.push_back("--json");
  auto [again, again_output] = Accelopt(run_json, c.dir() + "/run-again.log");
  ASSERT_EQ(again, 0) << again_output;
  EXPECT_TRUE(absl::StrContains(again_output, "resuming: 2 of 2 jobs submitted")) << again_output;
  EXPECT_FALSE(absl::StrContains(again_output, "submitted silu_2")) << again_output;
  auto json_again = core::ReadFile(results + "/results.json");
  ASSERT_TRUE(json_again.ok());
  EXPECT_EQ(*json_again, *json_text);
  const std::string trimmed = again_output.substr(0, again_output.find_last_not_of('\n') + 1);
  EXPECT_EQ(nlohmann::json::parse(trimmed.substr(trimmed.rfind('\n') + 1)), json);

  // A results directory whose jobs another cluster ran: the error says so and names the state file.
  const std::string foreign = c.dir() + "/foreign";
  std::filesystem::create_directories(foreign);
  auto state = core::ReadFile(results + "/state.json");
  ASSERT_TRUE(state.ok());
  nlohmann::json foreign_state = nlohmann::json::parse(*state);
  for (auto& [problem, id] : foreign_state.at("jobs").items()) id = "j-from-another-cluster-" + problem;
  ASSERT_TRUE(core::WriteFileAtomic(foreign + "/state.json", foreign_state.dump()).ok());
  std::vector<std::string> run_foreign = run;
  run_foreign[4] = foreign;
  auto [refused, refused_output] = Accelopt(run_foreign, c.dir() + "/run-foreign.log");
  EXPECT_EQ(refused, 1) << refused_output;
  EXPECT_TRUE(absl::StrContains(refused_output, "is not on this cluster")) << refused_output;
  EXPECT_TRUE(absl::StrContains(refused_output, foreign + "/state.json")) << refused_output;
}

}  // namespace
}  // namespace accelopt::e2e

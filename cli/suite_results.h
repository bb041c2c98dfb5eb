// The results of a suite run: one row per problem, geometric means, and their Markdown, JSON and HTML forms;
// and the side-by-side comparison of two runs.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/job.pb.h"

namespace accelopt::cli {

struct SuiteRow {
  std::string problem;
  std::string job_id;
  std::string state;  // "SUCCEEDED", ... or "PENDING" before the job finished
  double baseline_ms = 0;
  double best_ms = 0;
  double speedup = 0;  // 0 when the job found no correct kernel
  std::optional<double> peak_before, peak_after;
};

struct SuiteSummary {
  int problems = 0;
  int with_speedup = 0;  // rows with a correct kernel (speedup > 0), the geometric mean's population
  int improved = 0;      // rows with a speedup above 1
  std::optional<double> geomean_speedup, geomean_peak_before, geomean_peak_after;
};

// The row of a finished (or running) job.
SuiteRow RowFromJob(const std::string& problem, const v1::Job& job);

// Geometric means over the rows that have the value (speedup > 0; percentages present and > 0). As in
// accelopt-algorithm.md §4.5 the mean percentages are gmean(baseline %) = 1/gmean(headroom) and
// gmean(best %) = gmean(speedup)/gmean(headroom) when every row has both percentages.
SuiteSummary Summarize(const std::vector<SuiteRow>& rows);

std::string SuiteMarkdown(const std::string& suite_name, const std::vector<SuiteRow>& rows);
// Sorted keys: {"suite": name, "rows": [...], "summary": {...}}.
nlohmann::json SuiteJson(const std::string& suite_name, const std::vector<SuiteRow>& rows);
absl::StatusOr<std::vector<SuiteRow>> SuiteRowsFromJson(const nlohmann::json& json);
// CompareMarkdown's content as JSON: {"a", "b", "problems": [{"problem", "speedup_a", "speedup_b",
// "peak_after_a", "peak_after_b"}], "geomean_speedup_a/b", "geomean_peak_after_a/b"}; null where absent.
nlohmann::json CompareJson(const std::string& name_a, const std::vector<SuiteRow>& a, const std::string& name_b,
                           const std::vector<SuiteRow>& b);
// Self-contained page: the table, a speedup chart and a percentage-of-peak chart (before and after).
std::string SuiteHtml(const std::string& suite_name, const std::vector<SuiteRow>& rows);

// Problems of either run, by name: speedup and % of peak after, for A and B, and both geometric means.
std::string CompareMarkdown(const std::string& name_a, const std::vector<SuiteRow>& a, const std::string& name_b,
                            const std::vector<SuiteRow>& b);

}  // namespace accelopt::cli

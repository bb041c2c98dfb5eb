#include "cli/suite_results.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/core/enum_name.h"
#include "libs/report/job_report_html.h"
#include "libs/report/svg_plot.h"

namespace accelopt::cli {
namespace {

std::optional<double> Geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / values.size());
}

std::string Percent(const std::optional<double>& v) { return v ? absl::StrFormat("%.1f%%", *v) : "-"; }
std::string Times(double v) { return v > 0 ? absl::StrFormat("%.3fx", v) : "-"; }
std::string Ms(double v) { return v > 0 ? absl::StrFormat("%.4f", v) : "-"; }

nlohmann::json OptJson(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
std::optional<double> JsonOpt(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

}  // namespace

SuiteRow RowFromJob(const std::string& problem, const v1::Job& job) {
  SuiteRow row;
  row.problem = problem;
  row.job_id = job.job_id();
  row.state = core::ShortEnumName(job.state());
  row.baseline_ms = job.baseline_latency_ms();
  if (!job.best_candidate_id().empty()) {
    row.best_ms = job.best_latency_ms();
    row.speedup = job.best_speedup();
  }
  if (job.has_baseline_peak_percent()) row.peak_before = job.baseline_peak_percent();
  if (job.has_best_peak_percent()) row.peak_after = job.best_peak_percent();
  return row;
}

SuiteSummary Summarize(const std::vector<SuiteRow>& rows) {
  SuiteSummary s;
  s.problems = static_cast<int>(rows.size());
  std::vector<double> speedups, before, after;
  for (const SuiteRow& r : rows) {
    if (r.speedup > 0) speedups.push_back(r.speedup);
    if (r.speedup > 1) ++s.improved;
    if (r.peak_before && *r.peak_before > 0) before.push_back(*r.peak_before);
    if (r.peak_after && *r.peak_after > 0) after.push_back(*r.peak_after);
  }
  s.with_speedup = static_cast<int>(speedups.size());
  s.geomean_speedup = Geomean(speedups);
  s.geomean_peak_before = Geomean(before);
  s.geomean_peak_after = Geomean(after);
  return s;
}

std::string SuiteMarkdown(const std::string& suite_name, const std::vector<SuiteRow>& rows) {
  std::string md = absl::StrCat("# Suite ", suite_name, "\n\n",
                                "| problem | job | state | baseline (ms) | best (ms) | speedup | % of peak before | "
                                "% of peak after |\n|---|---|---|---|---|---|---|---|\n");
  for (const SuiteRow& r : rows) {
    absl::StrAppend(&md, "| ", r.problem, " | ", r.job_id, " | ", r.state, " | ", Ms(r.baseline_ms), " | ",
                    Ms(r.best_ms), " | ", Times(r.speedup), " | ", Percent(r.peak_before), " | ", Percent(r.peak_after),
                    " |\n");
  }
  const SuiteSummary s = Summarize(rows);
  absl::StrAppend(&md, "| **geometric mean** | | ", s.improved, "/", s.problems, " improved | | | ",
                  s.geomean_speedup ? Times(*s.geomean_speedup) : "-", " | ", Percent(s.geomean_peak_before), " | ",
                  Percent(s.geomean_peak_after), " |\n");
  return md;
}

nlohmann::json SuiteJson(const std::string& suite_name, const std::vector<SuiteRow>& rows) {
  nlohmann::json out;
  out["suite"] = suite_name;
  out["rows"] = nlohmann::json::array();
  for (const SuiteRow& r : rows) {
    out["rows"].push_back({{"problem", r.problem},
                           {"job_id", r.job_id},
                           {"state", r.state},
                           {"baseline_ms", r.baseline_ms},
                           {"best_ms", r.best_ms},
                           {"speedup", r.speedup},
                           {"peak_before", OptJson(r.peak_before)},
                           {"peak_after", OptJson(r.peak_after)}});
  }
  const SuiteSummary s = Summarize(rows);
  out["summary"] = {{"problems", s.problems},
                    {"improved", s.improved},
                    {"geomean_speedup", OptJson(s.geomean_speedup)},
                    {"geomean_peak_before", OptJson(s.geomean_peak_before)},
                    {"geomean_peak_after", OptJson(s.geomean_peak_after)}};
  return out;
}

absl::StatusOr<std::vector<SuiteRow>> SuiteRowsFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("rows") || !json["rows"].is_array()) {
    return absl::InvalidArgumentError("not suite results: no \"rows\" array");
  }
  std::vector<SuiteRow> rows;
  try {
    for (const nlohmann::json& r : json["rows"]) {
      SuiteRow row;
      row.problem = r.at("problem").get<std::string>();
      row.job_id = r.value("job_id", "");
      row.state = r.value("state", "");
      row.baseline_ms = r.value("baseline_ms", 0.0);
      row.best_ms = r.value("best_ms", 0.0);
      row.speedup = r.value("speedup", 0.0);
      row.peak_before = JsonOpt(r, "peak_before");
      row.peak_after = JsonOpt(r, "peak_after");
      rows.push_back(std::move(row));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad suite results: ", e.what()));
  }
  return rows;
}

std::string SuiteHtml(const std::string& suite_name, const std::vector<SuiteRow>& rows) {
  using report::HtmlEscape;
  const SuiteSummary s = Summarize(rows);
  std::string out = report::HtmlHead(absl::StrCat("AccelOpt suite ", suite_name));
  absl::StrAppend(&out, "<body>\n<h1>Suite ", HtmlEscape(suite_name), "</h1>\n<p class=\"sub\">", s.problems,
                  " problems, ", s.improved, " improved; geometric mean speedup ",
                  s.geomean_speedup ? Times(*s.geomean_speedup) : "-", ", % of peak ", Percent(s.geomean_peak_before),
                  " &rarr; ", Percent(s.geomean_peak_after), "</p>\n");
  report::BarChart speedup = report::MakeBarChart("Speedup over the baseline", "speedup (x)", {"speedup"}, {"#2ca02c"});
  report::BarChart peak = report::MakeBarChart("Percentage of peak, before and after", "% of peak", {"before", "gain"},
                                               {"#9ecae1", "#1f77b4"});
  speedup.width = peak.width = std::max(640, 70 * static_cast<int>(rows.size()) + 100);
  for (const SuiteRow& r : rows) {
    speedup.bars.push_back({r.problem, {r.speedup}});
    const double before = r.peak_before.value_or(0), after = r.peak_after.value_or(before);
    peak.bars.push_back({r.problem, {before, std::max(0.0, after - before)}});
  }
  absl::StrAppend(&out, "<h2>Results</h2>\n<div class=\"grid2\">\n", report::RenderBarChart(speedup),
                  report::RenderBarChart(peak), "</div>\n");
  out +=
      "<table><tr><th>problem</th><th>job</th><th>state</th><th>baseline (ms)</th><th>best (ms)</th>"
      "<th>speedup</th><th>% of peak before</th><th>% of peak after</th></tr>\n";
  for (const SuiteRow& r : rows) {
    absl::StrAppend(&out, "<tr><td>", HtmlEscape(r.problem), "</td><td>", HtmlEscape(r.job_id), "</td><td>",
                    HtmlEscape(r.state), "</td><td class=\"num\">", Ms(r.baseline_ms), "</td><td class=\"num\">",
                    Ms(r.best_ms), "</td><td class=\"num\">", Times(r.speedup), "</td><td class=\"num\">",
                    Percent(r.peak_before), "</td><td class=\"num\">", Percent(r.peak_after), "</td></tr>\n");
  }
  absl::StrAppend(&out, "<tr><th>geometric mean</th><th></th><th></th><th></th><th></th><th class=\"num\">",
                  s.geomean_speedup ? Times(*s.geomean_speedup) : "-", "</th><th class=\"num\">",
                  Percent(s.geomean_peak_before), "</th><th class=\"num\">", Percent(s.geomean_peak_after),
                  "</th></tr>\n</table>\n</body>\n</html>\n");
  return out;
}

namespace {

// The rows of two runs by problem (either side may be missing).
std::map<std::string, std::pair<const SuiteRow*, const SuiteRow*>> JoinByProblem(const std::vector<SuiteRow>& a,
                                                                                 const std::vector<SuiteRow>& b) {
  std::map<std::string, std::pair<const SuiteRow*, const SuiteRow*>> joined;
  for (const SuiteRow& r : a) joined[r.problem].first = &r;
  for (const SuiteRow& r : b) joined[r.problem].second = &r;
  return joined;
}

}  // namespace

nlohmann::json CompareJson(const std::string& name_a, const std::vector<SuiteRow>& a, const std::string& name_b,
                           const std::vector<SuiteRow>& b) {
  nlohmann::json out = {{"a", name_a}, {"b", name_b}, {"problems", nlohmann::json::array()}};
  for (const auto& [problem, rows] : JoinByProblem(a, b)) {
    const auto& [ra, rb] = rows;
    out["problems"].push_back({{"problem", problem},
                               {"speedup_a", ra ? nlohmann::json(ra->speedup) : nlohmann::json(nullptr)},
                               {"speedup_b", rb ? nlohmann::json(rb->speedup) : nlohmann::json(nullptr)},
                               {"peak_after_a", ra ? OptJson(ra->peak_after) : nlohmann::json(nullptr)},
                               {"peak_after_b", rb ? OptJson(rb->peak_after) : nlohmann::json(nullptr)}});
  }
  const SuiteSummary sa = Summarize(a), sb = Summarize(b);
  out["geomean_speedup_a"] = OptJson(sa.geomean_speedup);
  out["geomean_speedup_b"] = OptJson(sb.geomean_speedup);
  out["geomean_peak_after_a"] = OptJson(sa.geomean_peak_after);
  out["geomean_peak_after_b"] = OptJson(sb.geomean_peak_after);
  return out;
}

std::string CompareMarkdown(const std::string& name_a, const std::vector<SuiteRow>& a, const std::string& name_b,
                            const std::vector<SuiteRow>& b) {
  const auto joined = JoinByProblem(a, b);
  std::string md = absl::StrFormat(
      "| problem | speedup %s | speedup %s | %% of peak after %s | %% of peak after %s |\n|---|---|---|---|---|\n",
      name_a, name_b, name_a, name_b);
  for (const auto& [problem, rows] : joined) {
    const auto& [ra, rb] = rows;
    absl::StrAppend(&md, "| ", problem, " | ", ra ? Times(ra->speedup) : "(absent)", " | ",
                    rb ? Times(rb->speedup) : "(absent)", " | ", ra ? Percent(ra->peak_after) : "-", " | ",
                    rb ? Percent(rb->peak_after) : "-", " |\n");
  }
  const SuiteSummary sa = Summarize(a), sb = Summarize(b);
  absl::StrAppend(&md, "| **geometric mean** | ", sa.geomean_speedup ? Times(*sa.geomean_speedup) : "-", " | ",
                  sb.geomean_speedup ? Times(*sb.geomean_speedup) : "-", " | ", Percent(sa.geomean_peak_after), " | ",
                  Percent(sb.geomean_peak_after), " |\n");
  return md;
}

}  // namespace accelopt::cli

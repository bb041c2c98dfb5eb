#include "libs/report/job_report_html.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/core/enum_name.h"
#include "libs/report/line_diff.h"
#include "libs/report/svg_plot.h"

namespace accelopt::report {
namespace {

constexpr char kStyle[] = R"(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1340px;
color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#666;margin-top:0}.grid2{display:flex;flex-wrap:wrap;gap:12px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.summary td:first-child{font-weight:600;background:#fafafa}
svg.chart{background:#fff;border:1px solid #e4e4e4;border-radius:4px}
svg .grid{stroke:#eee}svg .axis{stroke:#888}svg .tick,svg .legend{font-size:11px;fill:#555}
svg .alabel{font-size:12px;fill:#333}svg .ctitle{font-size:13px;font-weight:600;fill:#222}
.tree{overflow:auto;max-height:720px;border:1px solid #e4e4e4;border-radius:4px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:5px;margin:0 4px 0 10px}
pre.diff{font-size:12px;background:#fafafa;border:1px solid #e4e4e4;padding:8px;overflow:auto;max-height:640px}
pre.diff .add{background:#e6ffec;display:block}pre.diff .del{background:#ffebe9;display:block}
pre.diff .same{display:block;color:#555}
</style>
)";

struct Ordered {
  const v1::Candidate* c;
  bool ok() const { return c->result().verdict() == v1::VERDICT_OK; }
};

std::string Verdict(const v1::Candidate& c) { return core::ShortEnumName(c.result().verdict()); }

std::string Fixed(double v, int digits) { return absl::StrFormat("%.*f", digits, v); }

// Latency at 100% of peak, from any correct candidate that reports its percentage of peak.
std::optional<double> RooflineLatency(const std::vector<const v1::Candidate*>& ok) {
  for (const v1::Candidate* c : ok) {
    if (c->result().has_peak_percent() && c->result().peak_percent() > 0) {
      return c->result().latency().mean_ms() * c->result().peak_percent() / 100.0;
    }
  }
  return std::nullopt;
}

std::string Summary(const v1::Job& job) {
  std::string out = "<table class=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    absl::StrAppend(&out, "<tr><td>", HtmlEscape(k), "</td><td>", HtmlEscape(v), "</td></tr>\n");
  };
  row("problem", absl::StrCat(job.spec().problem().name(), " on ", core::ShortEnumName(job.spec().device())));
  row("state", absl::StrCat(core::ShortEnumName(job.state()), " (", core::ShortEnumName(job.stop_reason()), ")",
                            job.message().empty() ? "" : absl::StrCat(": ", job.message())));
  const v1::SearchParams& s = job.spec().search();
  row("search", absl::StrFormat("preset %s, T=%d B=%d N=%d K=%d, seed %d", job.spec().preset(), s.iterations(),
                                s.beam_width(), s.plans_per_candidate(), s.samples_per_plan(), job.spec().seed()));
  row("baseline",
      absl::StrCat(
          Fixed(job.baseline_latency_ms(), 4), " ms",
          job.has_baseline_peak_percent() ? absl::StrFormat(" (%.1f%% of peak)", job.baseline_peak_percent()) : ""));
  row("best",
      job.best_candidate_id().empty()
          ? "none yet"
          : absl::StrCat(
                job.best_candidate_id(), ": ", Fixed(job.best_latency_ms(), 4), " ms, speedup ",
                Fixed(job.best_speedup(), 3), "x",
                job.has_best_peak_percent() ? absl::StrFormat(" (%.1f%% of peak)", job.best_peak_percent()) : ""));
  row("iterations done", absl::StrCat(job.iterations_done()));
  row("tokens", absl::StrFormat("%d prompt + %d completion, $%.4f", job.usage().prompt_tokens(),
                                job.usage().completion_tokens(), job.usage().cost_usd()));
  row("work", absl::StrFormat("%d profiles, %.1f device s, %.1f wall s", job.stats().profiles_run(),
                              job.stats().device_seconds(), job.stats().wall_seconds()));
  return out + "</table>\n";
}

// Latency, speedup and percentage-of-peak charts over iterations.
std::string ProgressCharts(const v1::Job& job, const std::vector<const v1::Candidate*>& ok) {
  std::map<int, const v1::Candidate*> best_of_iteration;
  for (const v1::Candidate* c : ok) {
    auto [it, inserted] = best_of_iteration.emplace(c->iteration(), c);
    if (!inserted && c->result().latency().mean_ms() < it->second->result().latency().mean_ms()) it->second = c;
  }
  Series all{"all correct", "#9ecae1", {}, false, false, true, 0.7};
  Series per_iteration{"best of iteration", "#1f77b4", {}};
  Series cumulative{"cumulative best", "#2ca02c", {}, true, true};
  Series speed_iter{"best of iteration", "#1f77b4", {}};
  Series speed_cum{"cumulative best", "#2ca02c", {}, true, true};
  Series peak_iter{"best of iteration", "#1f77b4", {}};
  Series peak_cum{"cumulative best", "#2ca02c", {}, true, true};
  for (const v1::Candidate* c : ok) all.points.push_back({double(c->iteration()), c->result().latency().mean_ms()});
  double best = std::numeric_limits<double>::infinity(), best_peak = 0;
  const double baseline = job.baseline_latency_ms();
  for (const auto& [iteration, c] : best_of_iteration) {
    const double latency = c->result().latency().mean_ms();
    best = std::min(best, latency);
    per_iteration.points.push_back({double(iteration), latency});
    cumulative.points.push_back({double(iteration), best});
    if (baseline > 0 && latency > 0) {
      speed_iter.points.push_back({double(iteration), baseline / latency});
      speed_cum.points.push_back({double(iteration), baseline / best});
    }
    if (c->result().has_peak_percent()) {
      best_peak = std::max(best_peak, c->result().peak_percent());
      peak_iter.points.push_back({double(iteration), c->result().peak_percent()});
      peak_cum.points.push_back({double(iteration), best_peak});
    }
  }
  LineChart latency;
  latency.title = "Latency over iterations";
  latency.x_label = "iteration";
  latency.y_label = "latency (ms)";
  latency.series = {all, per_iteration, cumulative};
  if (auto roof = RooflineLatency(ok)) {
    latency.reference_y = *roof;
    latency.reference_label = "roofline (100% of peak)";
  }
  LineChart speedup;
  speedup.title = "Speedup over the baseline";
  speedup.x_label = "iteration";
  speedup.y_label = "speedup (x)";
  speedup.series = {speed_iter, speed_cum};
  speedup.reference_y = 1.0;
  speedup.reference_label = "baseline";
  LineChart peak;
  peak.title = "Percentage of peak";
  peak.x_label = "iteration";
  peak.y_label = "% of peak";
  peak.series = {peak_iter, peak_cum};
  peak.reference_y = 100.0;
  peak.reference_label = "roofline";
  std::string out = "<div class=\"grid2\">\n";
  absl::StrAppend(&out, RenderLineChart(latency), RenderLineChart(speedup));
  if (!peak_iter.points.empty()) {
    out += RenderLineChart(peak);
  } else {
    out += "<p>No percentage of peak: the problem has no roofline terms.</p>\n";
  }
  return out + "</div>\n";
}

// The candidate tree: one column per iteration, children placed next to their parents, nodes coloured by verdict,
// the lineage of the best kernel drawn thick with ringed nodes.
std::string CandidateTree(const std::vector<const v1::Candidate*>& all, const std::map<std::string, bool>& on_lineage) {
  std::map<int, std::vector<const v1::Candidate*>> columns;
  for (const v1::Candidate* c : all) columns[c->iteration()].push_back(c);
  std::map<std::string, double> row;  // candidate id -> row position
  size_t rows = 1;
  for (auto& [iteration, column] : columns) {
    std::stable_sort(column.begin(), column.end(), [&](const v1::Candidate* a, const v1::Candidate* b) {
      auto pa = row.find(a->parent_id()), pb = row.find(b->parent_id());
      const double ra = pa == row.end() ? -1 : pa->second, rb = pb == row.end() ? -1 : pb->second;
      return ra < rb;
    });
    for (size_t i = 0; i < column.size(); ++i) row[column[i]->candidate_id()] = double(i);
    rows = std::max(rows, column.size());
  }
  constexpr int kColumn = 120, kRow = 20, kMargin = 30;
  const int width = kMargin * 2 + kColumn * std::max<int>(0, int(columns.size()) - 1) + 60;
  const int height = kMargin * 2 + kRow * int(rows);
  std::map<int, int> column_index;
  for (const auto& [iteration, column] : columns) column_index.emplace(iteration, int(column_index.size()));
  auto x = [&](const v1::Candidate* c) { return kMargin + kColumn * column_index.at(c->iteration()); };
  auto y = [&](const std::string& id) { return kMargin + kRow * row.at(id); };
  std::string edges, nodes, labels;
  for (const auto& [iteration, column] : columns) {
    absl::StrAppendFormat(&labels, "<text class=\"tick\" x=\"%d\" y=\"16\" text-anchor=\"middle\">it %d</text>\n",
                          kMargin + kColumn * column_index.at(iteration), iteration);
  }
  std::map<std::string, const v1::Candidate*> by_id;
  for (const v1::Candidate* c : all) by_id[c->candidate_id()] = c;
  for (const v1::Candidate* c : all) {
    const bool lineage = on_lineage.count(c->candidate_id()) > 0;
    if (auto parent = by_id.find(c->parent_id()); parent != by_id.end()) {
      const bool lineage_edge = lineage && on_lineage.count(c->parent_id()) > 0;
      absl::StrAppendFormat(
          &(lineage_edge ? labels : edges),
          "<line class=\"%s\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>\n",
          lineage_edge ? "lineage" : "edge", x(parent->second), y(c->parent_id()), x(c), y(c->candidate_id()),
          lineage_edge ? "#d62728" : "#ccc", lineage_edge ? "3" : "1");
    }
    const std::string tip = absl::StrCat(
        c->candidate_id(), " - ", Verdict(*c),
        c->result().verdict() == v1::VERDICT_OK ? absl::StrFormat(", %.4f ms", c->result().latency().mean_ms()) : "",
        c->plan().title().empty() ? "" : absl::StrCat(" - ", c->plan().title()));
    absl::StrAppendFormat(&nodes,
                          "<circle class=\"node%s\" data-verdict=\"%s\" cx=\"%d\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"%s>"
                          "<title>%s</title></circle>\n",
                          lineage ? " best-lineage" : "", Verdict(*c), x(c), y(c->candidate_id()),
                          lineage ? "6" : "4.5", VerdictColor(Verdict(*c)),
                          lineage ? " stroke=\"#d62728\" stroke-width=\"2.5\"" : "", HtmlEscape(tip));
  }
  std::string out = "<div class=\"tree\">\n";
  absl::StrAppendFormat(&out,
                        "<svg class=\"tree-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"candidate tree\">\n",
                        width, height, width, height);
  // Lineage edges are drawn after the other edges (they sit in `labels`) so they stay on top.
  absl::StrAppend(&out, edges, labels, nodes, "</svg>\n</div>\n");
  return out;
}

std::string VerdictLegend(const std::vector<std::string>& verdicts) {
  std::string out = "<p>";
  for (const std::string& v : verdicts) {
    absl::StrAppend(&out, "<span class=\"swatch\" style=\"background:", VerdictColor(v), "\"></span>", HtmlEscape(v));
  }
  return out + "<span class=\"swatch\" style=\"background:#fff;border:2px solid #d62728\"></span>winning lineage</p>\n";
}

std::string VerdictsPerIteration(const std::vector<const v1::Candidate*>& all, std::vector<std::string>* seen) {
  std::map<std::string, int> order;
  for (const v1::Candidate* c : all) order.emplace(Verdict(*c), int(c->result().verdict()));
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [name, number] : order) sorted.push_back({number, name});
  std::sort(sorted.begin(), sorted.end());
  BarChart chart;
  chart.title = "Verdicts per iteration";
  chart.y_label = "candidates";
  std::map<std::string, size_t> segment;
  for (const auto& [number, name] : sorted) {
    segment[name] = chart.segments.size();
    chart.segments.push_back(name);
    chart.colors.push_back(VerdictColor(name));
    seen->push_back(name);
  }
  std::map<int, std::vector<double>> counts;
  for (const v1::Candidate* c : all) {
    auto& v = counts[c->iteration()];
    v.resize(chart.segments.size());
    v[segment[Verdict(*c)]] += 1;
  }
  for (const auto& [iteration, values] : counts) chart.bars.push_back({absl::StrCat("it ", iteration), values});
  return RenderBarChart(chart);
}

std::string UsageByAgent(const v1::Job& job) {
  std::map<std::string, v1::TokenUsage> agents(job.usage_by_agent().begin(), job.usage_by_agent().end());
  BarChart tokens = MakeBarChart("Tokens by agent", "tokens", {"prompt", "completion"}, {"#1f77b4", "#ff7f0e"});
  BarChart cost = MakeBarChart("Cost by agent", "USD", {"cost"}, {"#9467bd"});
  std::string table =
      "<table><tr><th>agent</th><th>requests</th><th>retries</th><th>prompt tokens</th><th>completion tokens</th>"
      "<th>cost (USD)</th></tr>\n";
  for (const auto& [agent, u] : agents) {
    tokens.bars.push_back({agent, {double(u.prompt_tokens()), double(u.completion_tokens())}});
    cost.bars.push_back({agent, {u.cost_usd()}});
    absl::StrAppendFormat(&table,
                          "<tr><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td>"
                          "<td class=\"num\">%d</td><td class=\"num\">%.4f</td></tr>\n",
                          HtmlEscape(agent), u.requests(), u.retries(), u.prompt_tokens(), u.completion_tokens(),
                          u.cost_usd());
  }
  table += "</table>\n";
  tokens.width = cost.width = 420;
  return absl::StrCat("<div class=\"grid2\">\n", RenderBarChart(tokens), RenderBarChart(cost), "</div>\n", table);
}

// Cumulative tokens and cost per agent at the end of each iteration (IterationFinished snapshots), from zero at
// iteration 0 to the job's totals; nothing for a job that spent no tokens (builtin agents).
std::string UsageOverIterations(const v1::Job& job, const std::vector<v1::JobEvent>& events) {
  std::map<int, google::protobuf::Map<std::string, v1::TokenUsage>> snapshots;
  for (const v1::JobEvent& e : events) {
    if (e.has_iteration_finished())
      snapshots[e.iteration_finished().iteration()] = e.iteration_finished().usage_by_agent();
  }
  int64_t tokens_spent = 0;
  for (const auto& [agent, u] : job.usage_by_agent()) tokens_spent += u.prompt_tokens() + u.completion_tokens();
  if (snapshots.empty() || tokens_spent == 0) return "";  // nothing to plot
  snapshots[0];                                           // nothing spent before the first iteration
  snapshots[std::max(job.iterations_done(), snapshots.rbegin()->first)] = job.usage_by_agent();
  std::set<std::string> agents;
  for (const auto& [iteration, usage] : snapshots) {
    for (const auto& [agent, u] : usage) agents.insert(agent);
  }
  const std::map<std::string, std::string> colors = {
      {"planner", "#1f77b4"}, {"executor", "#ff7f0e"}, {"summarizer", "#2ca02c"}};
  LineChart tokens, cost;
  tokens.title = "Tokens over iterations (cumulative)";
  cost.title = "Cost over iterations (cumulative)";
  tokens.x_label = cost.x_label = "iteration";
  tokens.y_label = "tokens";
  cost.y_label = "USD";
  for (const std::string& agent : agents) {
    auto color = colors.find(agent);
    Series t{agent, color == colors.end() ? "#7f7f7f" : color->second, {}};
    Series c = t;
    for (const auto& [iteration, usage] : snapshots) {
      auto u = usage.find(agent);
      const v1::TokenUsage none;
      const v1::TokenUsage& at = u == usage.end() ? none : u->second;
      t.points.push_back({double(iteration), double(at.prompt_tokens() + at.completion_tokens())});
      c.points.push_back({double(iteration), at.cost_usd()});
    }
    tokens.series.push_back(std::move(t));
    cost.series.push_back(std::move(c));
  }
  tokens.width = cost.width = 420;
  return absl::StrCat("<div class=\"grid2\">\n", RenderLineChart(tokens), RenderLineChart(cost), "</div>\n");
}

std::string Experiences(const std::vector<v1::ExperienceAdded>& experiences) {
  if (experiences.empty()) return "<p>No experiences were added to memory.</p>\n";
  std::string out = "<table><tr><th>#</th><th>experience</th><th>speedup</th><th>kind</th></tr>\n";
  for (size_t i = 0; i < experiences.size(); ++i) {
    const v1::ExperienceAdded& e = experiences[i];
    absl::StrAppendFormat(&out,
                          "<tr><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%.3fx</td><td>%s</td></tr>\n",
                          i + 1, HtmlEscape(e.title()), e.speedup(), e.regression() ? "regression" : "improvement");
  }
  return out + "</table>\n";
}

std::string Lineage(const std::vector<const v1::Candidate*>& lineage) {
  std::string out =
      "<table><tr><th>iteration</th><th>candidate</th><th>plan</th><th>latency (ms)</th><th>vs parent</th>"
      "<th>vs baseline</th><th>% of peak</th></tr>\n";
  for (const v1::Candidate* c : lineage) {
    absl::StrAppendFormat(
        &out,
        "<tr><td class=\"num\">%d</td><td>%s</td><td>%s</td><td class=\"num\">%.4f</td><td class=\"num\">%.3fx</td>"
        "<td class=\"num\">%.3fx</td><td class=\"num\">%s</td></tr>\n",
        c->iteration(), HtmlEscape(c->candidate_id()),
        c->parent_id().empty() ? "(baseline)"
                               : HtmlEscape(c->plan().title().empty() ? c->plan().text() : c->plan().title()),
        c->result().latency().mean_ms(), c->parent_id().empty() ? 1.0 : c->speedup_vs_parent(),
        c->parent_id().empty() ? 1.0 : c->speedup_vs_baseline(),
        c->result().has_peak_percent() ? Fixed(c->result().peak_percent(), 1) : "-");
  }
  return out + "</table>\n";
}

std::string Diff(const std::string& baseline, const std::string& best) {
  std::string out = "<pre class=\"diff\">";
  for (const DiffLine& line : DiffLines(baseline, best)) {
    const char* cls = line.op == '+' ? "add" : line.op == '-' ? "del" : "same";
    absl::StrAppend(&out, "<span class=\"", cls, "\">", std::string(1, line.op), " ", HtmlEscape(line.text), "</span>");
  }
  return out + "</pre>\n";
}

}  // namespace

std::string VerdictColor(const std::string& verdict_key) {
  static const std::map<std::string, std::string> kColors = {{"OK", "#2ca02c"},
                                                             {"INCORRECT", "#ff7f0e"},
                                                             {"COMPILE_ERROR", "#9467bd"},
                                                             {"RUNTIME_ERROR", "#8c564b"},
                                                             {"TIMEOUT", "#e377c2"},
                                                             {"OUT_OF_MEMORY", "#7f7f7f"},
                                                             {"SANDBOX_VIOLATION", "#17becf"},
                                                             {"INFRA_ERROR", "#bcbd22"},
                                                             {"PROBLEM_ERROR", "#d62728"},
                                                             {"NO_KERNEL", "#c7c7c7"},
                                                             {"DUPLICATE", "#aec7e8"},
                                                             {"CANCELLED", "#555555"}};
  auto it = kColors.find(verdict_key);
  return it == kColors.end() ? "#dddddd" : it->second;
}

std::string HtmlHead(const std::string& title) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
                      HtmlEscape(title), "</title>\n", kStyle, "</head>\n");
}

std::string RenderJobReportHtml(const v1::Job& job, const std::vector<v1::Candidate>& candidates,
                                const std::vector<v1::JobEvent>& events) {
  std::vector<v1::ExperienceAdded> experiences;
  for (const v1::JobEvent& e : events) {
    if (e.has_experience_added()) experiences.push_back(e.experience_added());
  }
  std::vector<const v1::Candidate*> all;
  for (const v1::Candidate& c : candidates) all.push_back(&c);
  std::sort(all.begin(), all.end(), [](const v1::Candidate* a, const v1::Candidate* b) {
    return std::make_tuple(a->iteration(), a->ordinal(), a->candidate_id()) <
           std::make_tuple(b->iteration(), b->ordinal(), b->candidate_id());
  });
  std::vector<const v1::Candidate*> ok;
  std::map<std::string, const v1::Candidate*> by_id;
  for (const v1::Candidate* c : all) {
    if (c->result().verdict() == v1::VERDICT_OK) ok.push_back(c);
    by_id[c->candidate_id()] = c;
  }
  std::vector<const v1::Candidate*> lineage;
  std::map<std::string, bool> on_lineage;
  for (auto it = by_id.find(job.best_candidate_id()); it != by_id.end(); it = by_id.find(it->second->parent_id())) {
    if (on_lineage.count(it->first)) break;  // a cycle would be corrupt data; stop rather than loop
    lineage.insert(lineage.begin(), it->second);
    on_lineage[it->first] = true;
  }
  const std::string title = absl::StrCat("AccelOpt job ", job.job_id(),
                                         job.spec().name().empty() ? "" : absl::StrCat(" (", job.spec().name(), ")"));
  std::string out = HtmlHead(title);
  absl::StrAppend(&out, "<body>\n<h1>", HtmlEscape(title), "</h1>\n<p class=\"sub\">",
                  HtmlEscape(job.spec().problem().name()), " &middot; ", all.size(), " candidates</p>\n", Summary(job));
  absl::StrAppend(&out, "<h2>Progress</h2>\n", ProgressCharts(job, ok));
  std::vector<std::string> verdicts;
  const std::string verdict_chart = VerdictsPerIteration(all, &verdicts);
  absl::StrAppend(&out, "<h2>Candidate tree</h2>\n", VerdictLegend(verdicts), CandidateTree(all, on_lineage));
  absl::StrAppend(&out, "<h2>Verdicts per iteration</h2>\n", verdict_chart);
  absl::StrAppend(&out, "<h2>Tokens and cost by agent</h2>\n", UsageByAgent(job), UsageOverIterations(job, events));
  absl::StrAppend(&out, "<h2>Experiences learned</h2>\n", Experiences(experiences));
  absl::StrAppend(&out, "<h2>Lineage of the best kernel</h2>\n");
  if (lineage.empty()) {
    out += "<p>No correct kernel yet.</p>\n";
  } else {
    out += Lineage(lineage);
    absl::StrAppend(&out, "<h2>Best kernel against the baseline</h2>\n",
                    Diff(lineage.front()->kernel().source(), lineage.back()->kernel().source()));
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace accelopt::report

#include "services/orchestrator/job_report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/core/enum_name.h"
#include "libs/report/job_report_html.h"

namespace accelopt::orchestrator {
namespace {

std::string OneLine(const std::string& text, size_t width) {
  std::string line = text.substr(0, text.find('\n'));
  for (char& c : line) {
    if (c == '|') c = '/';
  }
  return line.size() <= width ? line : absl::StrCat(line.substr(0, width - 3), "...");
}

}  // namespace

std::string VerdictKey(v1::Verdict verdict) { return core::ShortEnumName(verdict); }
std::string JobStateName(v1::JobState state) { return core::ShortEnumName(state); }
std::string StopReasonName(v1::StopReason reason) { return core::ShortEnumName(reason); }

v1::JobReport BuildJobReport(const v1::Job& job, const std::vector<v1::Candidate>& candidates,
                             const std::vector<v1::JobEvent>& events) {
  v1::JobReport report;
  *report.mutable_job() = job;
  std::map<std::string, const v1::Candidate*> by_id;
  for (const v1::Candidate& c : candidates) by_id[c.candidate_id()] = &c;

  std::vector<const v1::Candidate*> lineage;
  if (auto it = by_id.find(job.best_candidate_id()); it != by_id.end()) {
    *report.mutable_best() = *it->second;
    for (const v1::Candidate* c = it->second; c != nullptr;) {
      lineage.push_back(c);
      auto parent = by_id.find(c->parent_id());
      c = parent == by_id.end() || c->parent_id().empty() ? nullptr : parent->second;
    }
    std::reverse(lineage.begin(), lineage.end());
    for (const v1::Candidate* c : lineage) *report.add_lineage() = *c;
  }

  std::string md = absl::StrCat("# AccelOpt job ", job.job_id(), job.spec().name().empty() ? "" : " (",
                                job.spec().name(), job.spec().name().empty() ? "" : ")", "\n\n");
  absl::StrAppendFormat(&md, "- problem: %s on %s\n", job.spec().problem().name(),
                        core::ShortEnumName(job.spec().device()));
  absl::StrAppendFormat(&md, "- state: %s (%s)%s\n", JobStateName(job.state()), StopReasonName(job.stop_reason()),
                        job.message().empty() ? "" : absl::StrCat(": ", job.message()));
  const v1::SearchParams& s = job.spec().search();
  absl::StrAppendFormat(&md, "- search: preset %s, T=%d B=%d N=%d K=%d TopK=%d ExpN=%d, seed %d\n", job.spec().preset(),
                        s.iterations(), s.beam_width(), s.plans_per_candidate(), s.samples_per_plan(),
                        s.experiences_per_iteration(), s.memory_capacity(), job.spec().seed());
  absl::StrAppendFormat(&md, "- iterations done: %d; experiences added: %d\n", job.iterations_done(),
                        job.experiences_added());
  absl::StrAppendFormat(&md, "- baseline: %.4f ms", job.baseline_latency_ms());
  if (job.has_baseline_peak_percent()) absl::StrAppendFormat(&md, " (%.1f%% of peak)", job.baseline_peak_percent());
  absl::StrAppendFormat(&md, "\n- best: %s, %.4f ms, speedup %.3fx", job.best_candidate_id(), job.best_latency_ms(),
                        job.best_speedup());
  if (job.has_best_peak_percent()) absl::StrAppendFormat(&md, " (%.1f%% of peak)", job.best_peak_percent());
  absl::StrAppendFormat(&md, "\n- tokens: %d prompt + %d completion, $%.4f\n", job.usage().prompt_tokens(),
                        job.usage().completion_tokens(), job.usage().cost_usd());
  absl::StrAppendFormat(&md, "- profiles run: %d (dispatch retries %d), device time %.1f s, wall time %.1f s\n",
                        job.stats().profiles_run(), job.stats().dispatch_retries(), job.stats().device_seconds(),
                        job.stats().wall_seconds());
  md += "\n## Candidates by verdict\n\n| verdict | count |\n|---|---|\n";
  std::map<std::string, int64_t> sorted(job.candidates().begin(), job.candidates().end());
  for (const auto& [verdict, count] : sorted) absl::StrAppendFormat(&md, "| %s | %d |\n", verdict, count);
  md +=
      "\n## Lineage of the best kernel\n\n| iteration | candidate | plan | latency (ms) | vs parent | vs baseline |\n"
      "|---|---|---|---|---|---|\n";
  for (const v1::Candidate* c : lineage) {
    absl::StrAppendFormat(&md, "| %d | %s | %s | %.4f | %.3fx | %.3fx |\n", c->iteration(), c->candidate_id(),
                          c->parent_id().empty()
                              ? "(baseline)"
                              : OneLine(c->plan().title().empty() ? c->plan().text() : c->plan().title(), 70),
                          c->result().latency().mean_ms(), c->parent_id().empty() ? 1.0 : c->speedup_vs_parent(),
                          c->speedup_vs_baseline());
  }
  if (!lineage.empty()) {
    absl::StrAppend(&md, "\n## Best kernel\n\n```python\n", lineage.back()->kernel().source(), "\n```\n");
  }
  report.set_markdown(std::move(md));
  report.set_html(report::RenderJobReportHtml(job, candidates, events));
  return report;
}

}  // namespace accelopt::orchestrator

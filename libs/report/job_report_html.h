// The job report as one self-contained HTML page: inline SVG charts and CSS, no scripts, no network fetches.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/job.pb.h"

namespace accelopt::report {

// Renders the page: summary; latency (all correct candidates, best per iteration, cumulative best, roofline
// latency) and speedup over iterations; percentage of peak; the candidate tree coloured by verdict with the
// winning lineage highlighted; verdicts per iteration; tokens and cost by agent, in total and over iterations
// (IterationFinished events); the experiences learned (ExperienceAdded events, in order); the lineage; and the
// best kernel's diff against the baseline. `events` are the job's events in order; others are ignored.
// Deterministic: candidates are ordered by (iteration, ordinal, id) internally, so the same inputs in any order
// give the same bytes.
std::string RenderJobReportHtml(const v1::Job& job, const std::vector<v1::Candidate>& candidates,
                                const std::vector<v1::JobEvent>& events);

// Colour of a verdict in every chart ("OK", "INCORRECT", ... as in Job.candidates keys).
std::string VerdictColor(const std::string& verdict_key);

// The page's <head> with the shared stylesheet, for other pages (e.g. suite reports) in the same style.
std::string HtmlHead(const std::string& title);

}  // namespace accelopt::report

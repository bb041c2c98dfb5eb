// A finished (or running) job's report: the best kernel, its lineage back to the baseline, and a Markdown
// summary of the search.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/job_service.pb.h"

namespace accelopt::orchestrator {

// Verdict name without the VERDICT_ prefix ("OK", "INCORRECT", ...), the key of Job.candidates.
std::string VerdictKey(v1::Verdict verdict);
// "RUNNING", "SUCCEEDED", ... and "ITERATIONS_DONE", "BUDGET_USD", ... (prefixes removed).
std::string JobStateName(v1::JobState state);
std::string StopReasonName(v1::StopReason reason);

// Builds the report (Markdown and HTML) from the job, all its candidates (any order) and its events in order
// (the report reads ExperienceAdded and IterationFinished). `best` is empty while the job has no correct kernel.
v1::JobReport BuildJobReport(const v1::Job& job, const std::vector<v1::Candidate>& candidates,
                             const std::vector<v1::JobEvent>& events = {});

}  // namespace accelopt::orchestrator

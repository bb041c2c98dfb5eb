// The requests the job engine sends to the memory, planner, executor and profilers, as pure functions of
// the job's spec and candidates. Seeds come from DeriveSeed (search_ids.h) and name a parent by its kernel's
// sha256, so the same spec and seed give the same requests in any job.
#pragma once

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "accelopt/v1/executor_service.pb.h"
#include "accelopt/v1/job.pb.h"
#include "accelopt/v1/memory_service.pb.h"
#include "accelopt/v1/planner_service.pb.h"
#include "accelopt/v1/profiler_service.pb.h"

namespace accelopt::orchestrator {

// The experiences to show the planner for `parent` in `iteration` (capacity, policy and seed of the spec).
v1::QueryExperiencesRequest BuildQueryExperiencesRequest(const v1::JobSpec& spec, absl::string_view job_id,
                                                         int iteration, const v1::Candidate& parent);

// N plans for `parent` (its kernel and profile), without experiences (the caller adds the memory's answer).
v1::PlanRequest BuildPlanRequest(const v1::JobSpec& spec, absl::string_view job_id, int iteration,
                                 const v1::Candidate& parent);

// K samples implementing plan `plan_index` of `parent`.
v1::ImplementRequest BuildImplementRequest(const v1::JobSpec& spec, absl::string_view job_id, int iteration,
                                           const v1::Candidate& parent, int plan_index, const v1::Plan& plan);

// The iteration's profiled samples (children of `iteration` with a kernel that was profiled, in ordinal
// order), each with its parent's kernel and latency. `candidates` holds every candidate of the job by id.
v1::SummarizeIterationRequest BuildSummarizeRequest(const v1::JobSpec& spec, absl::string_view job_id, int iteration,
                                                    const std::map<std::string, v1::Candidate>& candidates);

// The profile of `candidate`'s kernel on the spec's device, problem and profile options.
v1::ProfileRequest BuildProfileRequest(const v1::JobSpec& spec, const v1::Candidate& candidate);

}  // namespace accelopt::orchestrator

// The values that fill the planner templates: the profile in a fixed field order and the experiences block.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/planner_service.pb.h"
#include "google/protobuf/repeated_field.h"
#include "libs/llm/prompt_library.h"

namespace accelopt::llm {

// "latency_ms: <mean>" then each reported ProfileCounters field as "name: value", in proto field order (the
// reference implementation shuffles them; we never do). Integral values print without a fraction.
std::string FormatProfile(const v1::ProfileResult& profile);

// `experiences` (newest first, as the memory service returns them) with each batch (a run of experiences of
// the same job and iteration of origin) reordered as the reference lists new items: positives by speedup, best
// first, then regressions, worst first. Batches keep their order.
std::vector<const v1::Experience*> OrderExperiences(
    const google::protobuf::RepeatedPtrField<v1::Experience>& experiences);

// Empty for no experiences; otherwise a "## Experiences" section listing them in OrderExperiences order, each
// with its title and summary (or description), regressions marked as such.
std::string FormatExperiences(const google::protobuf::RepeatedPtrField<v1::Experience>& experiences);

// {{experiences}} for planner_system.
PromptValues PlannerSystemValues(const v1::PlanRequest& request);
// {{problem_source}}, {{kernel_source}}, {{profile}} for planner_user.
PromptValues PlannerUserValues(const v1::PlanRequest& request);

}  // namespace accelopt::llm

// Job specs: validation of what a client submits (INVALID_ARGUMENT naming the field), the search presets
// (paper, small, smoke) and the defaults that turn a submitted spec into the one the search runs on.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/job.pb.h"

namespace accelopt::orchestrator {

// Size limits of a submitted spec (OrchestratorConfig max_kernel_bytes / max_problem_bytes).
struct SpecLimits {
  int64_t max_kernel_bytes = 256 << 10;
  int64_t max_problem_bytes = 1 << 20;
};

// Preset used when a spec names none.
inline constexpr char kDefaultPreset[] = "paper";

// Model provider of an agent role whose spec names none.
inline constexpr char kDefaultProvider[] = "builtin";

// Search parameters of a preset: "paper" (B=6, N=12, K=2, T=16, TopK=8, ExpN=16), "small" (B=2, N=3, K=2,
// T=4, TopK=4, ExpN=8) or "smoke" (B=1, N=2, K=1, T=1, TopK=2, ExpN=4). INVALID_ARGUMENT for other names.
absl::StatusOr<v1::SearchParams> PresetParams(absl::string_view preset);

// OK, or INVALID_ARGUMENT naming the first bad field as "spec.<path>: <problem>" (of the models, only the
// provider name's shape and timeout_seconds: the agent services check the rest, agent_providers.h), e.g.
// "spec.search.beam_width: must be from 1 to 64 (0 = from the preset)"; a kernel source or problem over
// `limits` names the limit ("spec.baseline.source: 300000 bytes exceeds max_kernel_bytes (262144)").
absl::Status ValidateJobSpec(const v1::JobSpec& spec, const SpecLimits& limits);

// The spec the search runs on: the preset's parameters under the explicit fields, and defaults (device
// sim-trn1, thresholds 1.04 / 1.15, FIFO memory of namespace "job", 5 profile seeds, kernel hash filled).
// `spec` must be valid.
v1::JobSpec ResolveJobSpec(const v1::JobSpec& spec);

// The agent models ResolveJobSpec gives `spec` (what the agent services check at submit): preset paper's model
// and prompt set, the default provider, require_price under a dollar budget. Safe on any spec.
v1::AgentModels ResolveJobModels(const v1::JobSpec& spec);

// The memory namespace of a job: its id for private memory ("job" or empty), else the shared name.
std::string MemoryNamespace(const v1::JobSpec& spec, absl::string_view job_id);

}  // namespace accelopt::orchestrator

// The JSON forms of jobs that the CLI prints (`get`, `list`, `cancel`, `submit --wait` with --json) and
// exports (job.json, lineage.json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "accelopt/v1/job.pb.h"
#include "accelopt/v1/job_service.pb.h"

namespace accelopt::cli {

// The job as one JSON object: every accelopt.v1.Job field by its proto name in the form of ProtoToJson
// (cli/json_output.h), so state is "SUCCEEDED" and stop_reason null until the job stops, with `usage`
// and `stats` always present. Convenience keys: name and iterations (from the spec), tokens
// (prompt + completion), prompt_tokens, completion_tokens and cost_usd (from usage), and tokens in each
// usage_by_agent entry.
nlohmann::json JobJson(const v1::Job& job);

// The best kernel's lineage, baseline first: one object per candidate with candidate_id, iteration,
// parent_id (null for the baseline), plan_index, sample_index, plan_title, plan, verdict, latency_ms,
// speedup_vs_parent, speedup_vs_baseline, peak_percent (null when unknown) and kernel_sha256; no sources.
nlohmann::json LineageJson(const v1::JobReport& report);

}  // namespace accelopt::cli

// The job commands of `accelopt`: submit, watch, get, list, cancel and export, against the orchestrator's
// JobService (the local cluster's orchestrator from <data-dir>/cluster.json unless --server is given).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "accelopt/v1/job.pb.h"
#include "cli/command.h"

namespace accelopt::cli {

Command SubmitCommand();
Command WatchCommand();
Command GetCommand();
Command ListCommand();
Command CancelCommand();
Command ExportCommand();

// `server` when given, else the orchestrator recorded in <data_dir>/cluster.json, else 127.0.0.1:50050.
// DATA_LOSS when cluster.json exists but does not parse.
absl::StatusOr<std::string> OrchestratorAddress(const std::string& server, const std::string& data_dir);

// The job as one JSON object: job_id, name, state (QUEUED, RUNNING, SUCCEEDED, FAILED or CANCELLED),
// stop_reason, message, baseline_latency_ms, baseline_peak_percent, best_candidate_id, best_latency_ms,
// best_speedup, best_peak_percent (null when unknown), iterations_done, experiences_added, candidates
// (counts by verdict), tokens, prompt_tokens, completion_tokens, cost_usd, usage_by_agent, and stats
// {profiles_run, dispatch_retries, device_seconds, wall_seconds}.
std::string JobJson(const v1::Job& job);

}  // namespace accelopt::cli

// What the chaos suite measures: the outcome of one seeded job, how a faulted run differs from the unfaulted
// one, readiness probes, and the table of faults injected, survived and lost printed at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/e2e/e2e_cluster.h"

namespace accelopt::chaos {

// The seeded job every case runs: the builtin optimizer on the rope example (deterministic, no LLM).
v1::JobSpec RopeSpec(int iterations);

// What must not change under faults.
struct Outcome {
  std::string job_id;
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  v1::StopReason stop_reason = v1::STOP_REASON_UNSPECIFIED;
  std::string message;
  std::string best_source;
  std::map<std::string, int64_t> candidates;  // by verdict
  int64_t profiles_run = 0;
  int64_t distinct_profiled = 0;  // candidates with a profile result
  int64_t experiences_added = 0;
};

// Submits `spec` (retrying UNAVAILABLE while the orchestrator restarts), waits up to `timeout` for the job to
// finish (riding out an orchestrator that is down) and reads its outcome.
absl::StatusOr<Outcome> RunJob(e2e::E2eCluster& c, const v1::JobSpec& spec, std::chrono::seconds timeout);
// Waits for a submitted job.
absl::StatusOr<Outcome> WaitForOutcome(e2e::E2eCluster& c, const std::string& job_id, std::chrono::seconds timeout);

// What a faulted run lost against the reference: one line per difference (empty when identical).
std::vector<std::string> Differences(const Outcome& reference, const Outcome& faulted);

// The server-wide health status of `address` ("SERVING", "NOT_SERVING", or the RPC error).
std::string Health(const std::string& address);
// Polls until Health(address) == `want`; false after `timeout`.
bool WaitForHealth(const std::string& address, const std::string& want, std::chrono::seconds timeout);

// One row of the table.
struct FaultRow {
  std::string fault;
  int injected = 0;
  // "identical", "failed: <reason>" (ended FAILED naming the fault), or "lost: <what>".
  std::string result;
};
// Rows are collected over the whole run and printed once at exit.
void Record(FaultRow row);
std::string Table();

}  // namespace accelopt::chaos

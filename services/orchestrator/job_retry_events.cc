// Agent retries as job events: the agent clients report each retry (and each give-up of a retried call);
// the engine counts them in the job's stats and records AgentRetried events, at most one per agent per
// interval. The time spent retrying is wall time of the job, so the wall-time budget bounds it.
#include "absl/time/clock.h"
#include "libs/core/log.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/job_engine_internal.h"

namespace accelopt::orchestrator {
namespace {

v1::JobEvent AgentRetriedEvent(const std::string& agent, const std::string& method, int retries,
                               const std::string& error, bool gave_up) {
  v1::JobEvent e;
  v1::AgentRetried* retried = e.mutable_agent_retried();
  retried->set_agent(agent);
  retried->set_method(method);
  retried->set_retries(retries);
  retried->set_error(error);
  retried->set_gave_up(gave_up);
  return e;
}

}  // namespace

std::function<void(const AgentRetryEvent&)> JobEngine::AgentRetryListener() {
  return [this, mailbox = mailbox_](const AgentRetryEvent& retry) {
    // The mailbox drops the closure once the engine is gone, so `this` is only used while it lives.
    mailbox->Post([this, retry] { OnAgentRetry(retry); });
  };
}

void JobEngine::OnAgentRetry(const AgentRetryEvent& retry) {
  Run* run = FindRun(retry.job_id);
  if (run == nullptr || !run->active) return;
  Run::RetryTally& tally = run->retry_tallies[retry.agent];
  tally.method = retry.method;
  tally.error = std::string(retry.status.message());
  if (!retry.gave_up) {
    ++tally.pending;
    v1::JobStats* stats = run->job().mutable_stats();
    stats->set_agent_retries(stats->agent_retries() + 1);
  }
  const absl::Time now = absl::Now();
  if (!retry.gave_up && now - tally.last_event < options_.retry_event_interval) return;
  if (retry.gave_up) {
    ACCELOPT_LOG(WARNING).With("job_id", run->id())
        << retry.agent << " " << retry.method << " gave up: " << retry.status.message();
  }
  Transaction txn;
  txn.AddEvent(&run->record, AgentRetriedEvent(retry.agent, tally.method, tally.pending, tally.error, retry.gave_up));
  tally.pending = 0;
  tally.last_event = now;
  Commit(*run, std::move(txn));
}

void JobEngine::FlushAgentRetries(Run& run) {
  const absl::Time now = absl::Now();
  Transaction txn;
  for (auto& [agent, tally] : run.retry_tallies) {
    if (tally.pending == 0 || now - tally.last_event < options_.retry_event_interval) continue;
    txn.AddEvent(&run.record, AgentRetriedEvent(agent, tally.method, tally.pending, tally.error, false));
    tally.pending = 0;
    tally.last_event = now;
  }
  if (!txn.events().empty()) Commit(run, std::move(txn));
}

}  // namespace accelopt::orchestrator

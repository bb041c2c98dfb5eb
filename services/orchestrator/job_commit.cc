// Commits, stops and sticky store errors: every transition of a job is one atomic JobStore commit; a commit
// the store refuses fails the job at its last committed transition.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libs/core/log.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/job_engine_internal.h"
#include "services/orchestrator/job_report.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/search_rules.h"

namespace accelopt::orchestrator {

bool JobEngine::Commit(Run& run, Transaction txn) {
  if (!run.store_error.ok()) return false;
  absl::Status s = Write(run, std::move(txn));
  if (s.ok()) return true;
  FailOnStoreError(run, s);
  return false;
}

absl::Status JobEngine::Write(Run& run, Transaction txn) {
  UpdateWall(run);
  *run.job().mutable_updated_at() = NowTimestamp();
  txn.PutJob(run.record);
  std::vector<v1::JobEvent> events = txn.events();
  std::map<std::string, v1::Candidate> candidates = txn.TakeCandidates();
  if (absl::Status s = store_->Commit(std::move(txn)); !s.ok()) return s;
  run.committed_record = run.record;
  for (auto& [id, c] : candidates) run.committed_candidates[id] = std::move(c);
  if (!events.empty()) {
    for (auto& sink : run.watchers) sink->OnEvents(events);
  }
  return absl::OkStatus();
}

void JobEngine::FailOnStoreError(Run& run, const absl::Status& error) {
  ACCELOPT_LOG(ERROR).With("job_id", run.id()) << "cannot store a transition, the job fails: " << error.message();
  run.store_error = error;
  if (metrics_ != nullptr) metrics_->store_errors.Increment();
  // Nothing in memory goes past what is on disk: back to the last committed transition.
  SetState(run, run.committed_record.job().state());
  run.record = run.committed_record;
  run.candidates = run.committed_candidates;
  Stop(run, Transaction(), v1::JOB_STATE_FAILED, v1::STOP_REASON_STORE_ERROR,
       absl::StrCat("the job store refused a write: ", error.ToString()), "");
}

void JobEngine::Stop(Run& run, Transaction txn, v1::JobState state, v1::StopReason reason, const std::string& message,
                     const std::string& detail) {
  run.active = false;
  for (auto& [call_id, handle] : run.calls) handle->Cancel();
  run.calls.clear();
  profile_queues_.Drop(run.id());
  for (auto& [id, c] : run.candidates) {
    if (c.state() == v1::CANDIDATE_STATE_DONE) continue;
    c.mutable_result()->set_verdict(v1::VERDICT_CANCELLED);
    c.mutable_result()->set_message(absl::StrCat("the job stopped: ", StopReasonName(reason)));
    Finalize(run, txn, c);
  }
  UpdateWall(run);
  v1::Job& job = run.job();
  SetState(run, state);
  job.set_stop_reason(reason);
  if (!message.empty()) job.set_message(message);
  if (state == v1::JOB_STATE_SUCCEEDED &&
      (job.best_candidate_id().empty() || job.best_candidate_id() == kBaselineCandidateId)) {
    job.set_message(NoImprovementMessage(message));
  }
  run.record.set_phase(v1::JobRecord::PHASE_DONE);
  if (!detail.empty() && reason != v1::STOP_REASON_TARGET_PEAK && reason != v1::STOP_REASON_CANCELLED) {
    v1::JobEvent e;
    e.mutable_budget_exhausted()->set_reason(reason);
    e.mutable_budget_exhausted()->set_detail(detail);
    txn.AddEvent(&run.record, std::move(e));
  }
  txn.AddEvent(&run.record, StateChangedEvent(state, reason, job.message()));
  absl::Status stored;
  if (run.store_error.ok()) {
    // A refused write fails the job instead (FailOnStoreError has stopped it).
    if (!Commit(run, std::move(txn))) return;
  } else {
    // The one write allowed after a store error: the record of the failure.
    stored = Write(run, std::move(txn));
    if (!stored.ok()) {
      ACCELOPT_LOG(ERROR).With("job_id", run.id())
          << "cannot store the job's failure either; it is failed in memory only: " << stored.message();
    }
  }
  ACCELOPT_LOG(INFO).With("job_id", run.id())
      << "job " << JobStateName(state) << " (" << StopReasonName(reason) << "), best speedup " << job.best_speedup();
  if (metrics_ != nullptr) {
    metrics_->CountFinishedJob(absl::AsciiStrToLower(JobStateName(state)), StopReasonName(reason),
                               job.stats().wall_seconds());
    metrics_->ForgetJob(run.id());
  }
  for (auto& sink : run.watchers) sink->OnEnd(stored);
  run.watchers.clear();
  const std::string id = run.id();
  queued_.erase(std::remove(queued_.begin(), queued_.end(), id), queued_.end());
  // Callers up the stack may still hold `run`: forget it once they have returned. A failure the store did not
  // take stays in memory, so the job reads FAILED until a restart shows its last committed state.
  if (stored.ok()) Post([this, id] { runs_.erase(id); });
  UpdateJobGauges();
  ScheduleQueued();
  PumpProfiles();
}

}  // namespace accelopt::orchestrator

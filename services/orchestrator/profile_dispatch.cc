// The profile dispatcher: candidates from the per-job queues (profile_queues.h) go to the pool whenever it
// has a free slot; and the transition a profile result makes (the candidate's verdict, the job's counters and best).
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "services/orchestrator/beam_selection.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/job_engine_internal.h"
#include "services/orchestrator/job_report.h"
#include "services/orchestrator/request_builders.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/search_rules.h"

namespace accelopt::orchestrator {

void JobEngine::EnqueueProfile(Run& run, const std::string& candidate_id) {
  profile_queues_.Push(run.id(), candidate_id, absl::Now());
}

void JobEngine::PumpProfiles() {
  auto active = [this](const std::string& job_id) {
    Run* run = FindRun(job_id);
    return run != nullptr && run->active;
  };
  while (clients_.profilers->FreeSlots() > 0) {
    std::optional<ProfileQueues::Entry> next = profile_queues_.Pop(active);
    if (!next.has_value()) break;
    Dispatch(*FindRun(next->job_id), next->candidate_id, next->since);
  }
  if (metrics_ != nullptr) metrics_->SetQueueDepth(kStageProfile, static_cast<double>(profile_queues_.size()));
}

void JobEngine::Dispatch(Run& run, const std::string& candidate_id, absl::Time queued_since) {
  v1::Candidate& c = run.candidates[candidate_id];
  if (c.state() == v1::CANDIDATE_STATE_DONE) return;
  c.set_state(v1::CANDIDATE_STATE_PROFILING);
  if (metrics_ != nullptr) metrics_->ObserveWait(kStageProfile, absl::ToDoubleSeconds(absl::Now() - queued_since));
  const v1::JobSpec& spec = run.spec();
  v1::ProfileRequest request = BuildProfileRequest(spec, c);
  const absl::Duration timeout = spec.profile().timeout_seconds() > 0 ? absl::Seconds(spec.profile().timeout_seconds())
                                                                      : options_.default_profile_timeout;
  const std::string job_id = run.id();
  auto call_id = std::make_shared<uint64_t>(0);
  *call_id =
      Track(run, clients_.profilers->Profile(
                     std::move(request), timeout + options_.profile_margin,
                     [mailbox = mailbox_, this, job_id, candidate_id, call_id](ProfileOutcome outcome) mutable {
                       mailbox->Post([this, job_id, candidate_id, call_id, outcome = std::move(outcome)]() mutable {
                         Run* run = FindRun(job_id);
                         if (run == nullptr || !run->active || !Untrack(*run, *call_id)) return;
                         OnProfiled(job_id, candidate_id, std::move(outcome));
                       });
                     }));
}

void JobEngine::OnProfiled(const std::string& job_id, const std::string& candidate_id, ProfileOutcome outcome) {
  Run* run = FindRun(job_id);
  if (run == nullptr || !run->active) return;
  v1::Candidate& c = run->candidates[candidate_id];
  if (c.state() == v1::CANDIDATE_STATE_DONE) return;
  v1::Job& job = run->job();
  job.mutable_stats()->set_profiles_run(job.stats().profiles_run() + outcome.executions);
  job.mutable_stats()->set_dispatch_retries(job.stats().dispatch_retries() + outcome.retries);
  if (metrics_ != nullptr && outcome.retries > 0) metrics_->dispatch_retries.Increment(outcome.retries);
  if (outcome.result.ok()) {
    *c.mutable_result() = *std::move(outcome.result);
  } else {
    c.mutable_result()->set_verdict(v1::VERDICT_INFRA_ERROR);
    c.mutable_result()->set_message(
        absl::StrCat("no profiler worker produced a result: ", outcome.result.status().message()));
  }
  job.mutable_stats()->set_device_seconds(job.stats().device_seconds() + c.result().device_seconds());
  Transaction txn;
  if (IsOk(c)) {
    auto parent = run->candidates.find(c.parent_id());
    if (parent != run->candidates.end() && IsOk(parent->second)) {
      c.set_speedup_vs_parent(Latency(parent->second) / Latency(c));
    }
    if (job.baseline_latency_ms() > 0) c.set_speedup_vs_baseline(job.baseline_latency_ms() / Latency(c));
  }
  Finalize(*run, txn, c);
  if (candidate_id == kBaselineCandidateId) {
    OnBaseline(*run, txn, c);
    return;
  }
  auto best = run->candidates.find(job.best_candidate_id());
  if (IsNewBest(best == run->candidates.end() ? nullptr : &best->second, c)) {
    SetBest(*run, txn, c, c.speedup_vs_baseline());
  }
  if (!Commit(*run, std::move(txn))) return;
  PumpProfiles();
  AfterTransition(*run);
}

}  // namespace accelopt::orchestrator

// The profile dispatcher: candidates from the per-job queues (profile_queues.h) go to the pool whenever it
// has a free slot; and the transition a profile result makes (the candidate's verdict, the job's counters and best).
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/core/log.h"
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

void JobEngine::EnqueueBeamRemeasures(Run& run) {
  const int t = run.record.iteration();
  if (!run.spec().search().reprofile_beam() || t < 2) return;
  std::set<std::string> queued;
  for (const std::string& id : run.record.beam()) {
    v1::Candidate& c = run.candidates[id];
    if (!IsOk(c) || c.remeasured_in_iteration() >= t || !queued.insert(id).second) continue;
    ++run.remeasures_pending;
    profile_queues_.Push(run.id(), id, absl::Now(), /*remeasure=*/true);
  }
}

void JobEngine::PumpProfiles() {
  auto active = [this](const std::string& job_id) {
    Run* run = FindRun(job_id);
    return run != nullptr && run->active;
  };
  while (clients_.profilers->FreeSlots() > 0) {
    std::optional<ProfileQueues::Entry> next = profile_queues_.Pop(active);
    if (!next.has_value()) break;
    Dispatch(*FindRun(next->job_id), next->candidate_id, next->since, next->remeasure);
  }
  if (metrics_ != nullptr) metrics_->SetQueueDepth(kStageProfile, static_cast<double>(profile_queues_.size()));
}

void JobEngine::Dispatch(Run& run, const std::string& candidate_id, absl::Time queued_since, bool remeasure) {
  v1::Candidate& c = run.candidates[candidate_id];
  if (!remeasure) {
    if (c.state() == v1::CANDIDATE_STATE_DONE) return;
    c.set_state(v1::CANDIDATE_STATE_PROFILING);
  }
  if (metrics_ != nullptr) metrics_->ObserveWait(kStageProfile, absl::ToDoubleSeconds(absl::Now() - queued_since));
  const v1::JobSpec& spec = run.spec();
  v1::ProfileRequest request = BuildProfileRequest(spec, c);
  const absl::Duration timeout = spec.profile().timeout_seconds() > 0 ? absl::Seconds(spec.profile().timeout_seconds())
                                                                      : options_.default_profile_timeout;
  const std::string job_id = run.id();
  const int iteration = run.record.iteration();
  auto call_id = std::make_shared<uint64_t>(0);
  *call_id =
      Track(run, clients_.profilers->Profile(std::move(request), timeout + options_.profile_margin,
                                             [mailbox = mailbox_, this, job_id, candidate_id, call_id, remeasure,
                                              iteration](ProfileOutcome outcome) mutable {
                                               mailbox->Post([this, job_id, candidate_id, call_id, remeasure, iteration,
                                                              outcome = std::move(outcome)]() mutable {
                                                 Run* run = FindRun(job_id);
                                                 if (run == nullptr || !run->active || !Untrack(*run, *call_id)) return;
                                                 if (remeasure) {
                                                   OnRemeasured(job_id, candidate_id, iteration, std::move(outcome));
                                                 } else {
                                                   OnProfiled(job_id, candidate_id, std::move(outcome));
                                                 }
                                               });
                                             }));
}

void JobEngine::CountProfile(Run& run, const ProfileOutcome& outcome) {
  v1::Job& job = run.job();
  job.mutable_stats()->set_profiles_run(job.stats().profiles_run() + outcome.executions);
  job.mutable_stats()->set_dispatch_retries(job.stats().dispatch_retries() + outcome.retries);
  if (metrics_ != nullptr && outcome.retries > 0) metrics_->dispatch_retries.Increment(outcome.retries);
  if (outcome.result.ok()) {
    job.mutable_stats()->set_device_seconds(job.stats().device_seconds() + outcome.result->device_seconds());
  }
}

void JobEngine::OnProfiled(const std::string& job_id, const std::string& profiled_id, ProfileOutcome outcome) {
  Run* run = FindRun(job_id);
  if (run == nullptr || !run->active) return;
  std::string candidate_id = profiled_id;
  if (auto handed = run->profile_handed_to.find(profiled_id); handed != run->profile_handed_to.end()) {
    candidate_id = handed->second;  // the profiled candidate became a DUPLICATE of this one (TakeOverOriginal)
    run->profile_handed_to.erase(handed);
  }
  v1::Candidate& c = run->candidates[candidate_id];
  if (c.state() == v1::CANDIDATE_STATE_DONE) return;
  CountProfile(*run, outcome);
  if (outcome.result.ok()) {
    *c.mutable_result() = *std::move(outcome.result);
  } else {
    c.mutable_result()->set_verdict(v1::VERDICT_INFRA_ERROR);
    c.mutable_result()->set_message(
        absl::StrCat("no profiler worker produced a result: ", outcome.result.status().message()));
  }
  Transaction txn;
  if (candidate_id == kBaselineCandidateId) {
    Finalize(*run, txn, c);
    OnBaseline(*run, txn, c);
    return;
  }
  Judge(*run, txn, c);
  if (!Commit(*run, std::move(txn))) return;
  PumpProfiles();
  AfterTransition(*run);
}

void JobEngine::Judge(Run& run, Transaction& txn, v1::Candidate& c, bool count_verdict) {
  v1::Job& job = run.job();
  if (IsOk(c)) {
    auto parent = run.candidates.find(c.parent_id());
    if (parent != run.candidates.end() && IsOk(parent->second)) {
      c.set_speedup_vs_parent(Latency(parent->second) / Latency(c));
    }
    if (job.baseline_latency_ms() > 0) c.set_speedup_vs_baseline(job.baseline_latency_ms() / Latency(c));
  }
  Finalize(run, txn, c, count_verdict);
  auto best = run.candidates.find(job.best_candidate_id());
  if (IsNewBest(best == run.candidates.end() ? nullptr : &best->second, c)) {
    SetBest(run, txn, c, c.speedup_vs_baseline());
  }
}

void JobEngine::OnRemeasured(const std::string& job_id, const std::string& candidate_id, int iteration,
                             ProfileOutcome outcome) {
  Run* run = FindRun(job_id);
  if (run == nullptr || !run->active || run->record.iteration() != iteration) return;
  --run->remeasures_pending;
  CountProfile(*run, outcome);
  v1::Candidate& c = run->candidates[candidate_id];
  v1::Job& job = run->job();
  c.set_remeasured_in_iteration(iteration);
  if (outcome.result.ok() && outcome.result->verdict() == v1::VERDICT_OK && outcome.result->has_latency()) {
    c.add_remeasured_latency_ms(outcome.result->latency().mean_ms());
    if (candidate_id == kBaselineCandidateId) job.set_baseline_latency_ms(Latency(c));
    if (job.baseline_latency_ms() > 0) c.set_speedup_vs_baseline(job.baseline_latency_ms() / Latency(c));
  } else {
    // The first verdict stands; a device that cannot repeat a measurement is worth a warning, not a verdict.
    ACCELOPT_LOG(WARNING).With("job_id", job_id).With("candidate_id", candidate_id)
        << "re-measuring a beam member gave no latency: "
        << (outcome.result.ok() ? absl::StrCat(VerdictKey(outcome.result->verdict()), " ", outcome.result->message())
                                : std::string(outcome.result.status().message()));
  }
  Transaction txn;
  txn.PutCandidate(c);
  RefreshBest(*run, txn);
  if (!Commit(*run, std::move(txn))) return;
  PumpProfiles();
  AfterTransition(*run);
}

void JobEngine::RefreshBest(Run& run, Transaction& txn) {
  const v1::Candidate* best = nullptr;
  for (const auto& [id, c] : run.candidates) {
    if (IsNewBest(best, c)) best = &c;
  }
  if (best == nullptr) return;
  v1::Job& job = run.job();
  const double speedup = job.baseline_latency_ms() > 0 ? job.baseline_latency_ms() / Latency(*best) : 1.0;
  if (best->candidate_id() != job.best_candidate_id()) {
    SetBest(run, txn, *best, speedup);
    return;
  }
  job.set_best_latency_ms(Latency(*best));
  job.set_best_speedup(speedup);
  if (metrics_ != nullptr) metrics_->SetBestSpeedup(run.id(), speedup);
}

}  // namespace accelopt::orchestrator

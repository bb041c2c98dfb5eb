// The per-job search state machine: BASELINE -> SEARCHING (iteration t: memory, planner, executor, profiles)
// -> SUMMARIZING -> SEARCHING (t + 1) ... -> DONE. Each step runs on the loop when the previous one's
// answer arrives; every transition is one commit (job_commit.cc).
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/core/log.h"
#include "libs/core/sha256.h"
#include "services/orchestrator/beam_selection.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/job_engine_internal.h"
#include "services/orchestrator/job_report.h"
#include "services/orchestrator/request_builders.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/search_rules.h"

namespace accelopt::orchestrator {
namespace {

constexpr char kPlanner[] = "planner";
constexpr char kExecutor[] = "executor";
constexpr char kSummarizer[] = "summarizer";
// The error of every plan sample of a failed planner call (the call failed, not the model).
constexpr char kPlannerCallFailed[] = "planner call failed: ";

// Beam copies (BEAM_POLICY_REFERENCE pads the beam with parent copies): the branch key of beam rank `rank`
// is the parent's id for its first occurrence and "<id>#<rank>" for a copy, so a copy's plans and candidates
// get ids and seeds of their own. Without copies the keys are the parent ids, as before.
std::string BranchKey(const v1::JobRecord& record, int rank) {
  const std::string& id = record.beam(rank);
  for (int r = 0; r < rank; ++r) {
    if (record.beam(r) == id) return absl::StrCat(id, "#", rank);
  }
  return id;
}

// A copy asks its agents with a seed of its own (the first occurrence keeps the parent's seed).
template <typename Request>
Request ReseedForCopy(Request request, const v1::JobSpec& spec, absl::string_view purpose, int iteration,
                      absl::string_view branch, const std::string& parent_id, int index) {
  if (branch != parent_id) request.set_seed(DeriveSeed(spec.seed(), purpose, iteration, branch, index));
  return request;
}

// Makes `c` a DUPLICATE of `original_id`, with nothing of a result of its own.
void MarkDuplicate(v1::Candidate& c, const std::string& original_id) {
  c.clear_result();
  c.clear_speedup_vs_parent();
  c.clear_speedup_vs_baseline();
  c.set_duplicate_of(original_id);
  c.mutable_result()->set_verdict(v1::VERDICT_DUPLICATE);
  c.mutable_result()->set_message(absl::StrCat("same kernel as ", original_id));
}

}  // namespace

void JobEngine::Resume(Run& run) {
  run.active = true;
  run.running_since = absl::Now();
  run.wall_base = run.record.job().stats().wall_seconds();
  auto candidates = store_->LoadCandidates(run.id());
  if (!candidates.ok()) {
    ACCELOPT_LOG(ERROR).With("job_id", run.id()) << "cannot load candidates: " << candidates.status().message();
    Stop(run, Transaction(), v1::JOB_STATE_FAILED, v1::STOP_REASON_ERROR,
         absl::StrCat("cannot resume: ", candidates.status().message()), "");
    return;
  }
  std::vector<v1::Candidate*> unfinished;
  for (v1::Candidate& c : *candidates) {
    std::string id = c.candidate_id();
    v1::Candidate& stored = run.candidates[id] = std::move(c);
    if (IsOriginalKernel(stored)) run.original_by_hash.emplace(stored.kernel().sha256(), id);
    if (stored.iteration() == run.record.iteration() && stored.state() == v1::CANDIDATE_STATE_DONE) {
      ++run.iteration_final;
    }
    if (stored.state() != v1::CANDIDATE_STATE_DONE) unfinished.push_back(&stored);
  }
  run.committed_candidates = run.candidates;
  std::sort(unfinished.begin(), unfinished.end(),
            [](v1::Candidate* a, v1::Candidate* b) { return a->ordinal() < b->ordinal(); });
  ACCELOPT_LOG(INFO).With("job_id", run.id())
      << "resuming job at iteration " << run.record.iteration() << " with " << run.candidates.size()
      << " stored candidates, " << unfinished.size() << " to profile";
  for (v1::Candidate* c : unfinished) {
    c->set_state(v1::CANDIDATE_STATE_QUEUED);
    EnqueueProfile(run, c->candidate_id());
  }
  switch (run.record.phase()) {
    case v1::JobRecord::PHASE_SEARCHING:
      StartIterationWork(run);
      AfterTransition(run);
      break;
    case v1::JobRecord::PHASE_SUMMARIZING:
      // Delivery of a stored outbox entry started with the engine; an iteration without one is summarized now.
      if (outbox_.count(JobStore::OutboxKey(run.id(), run.record.iteration())) > 0) {
        run.summarize_since = absl::Now();
      } else {
        Summarize(run, Transaction());
      }
      break;
    default:
      if (run.candidates.count(kBaselineCandidateId) == 0) StartJob(run);
      break;
  }
  PumpProfiles();
}

void JobEngine::StartJob(Run& run) {
  Transaction txn;
  if (run.record.job().state() != v1::JOB_STATE_RUNNING) {
    SetState(run, v1::JOB_STATE_RUNNING);
    txn.AddEvent(&run.record, StateChangedEvent(v1::JOB_STATE_RUNNING, v1::STOP_REASON_UNSPECIFIED, ""));
    run.running_since = absl::Now();
    run.wall_base = run.record.job().stats().wall_seconds();
  }
  run.active = true;
  run.record.set_phase(v1::JobRecord::PHASE_BASELINE);
  run.record.set_iteration(0);
  v1::Candidate& baseline = run.candidates[kBaselineCandidateId];
  baseline.set_candidate_id(kBaselineCandidateId);
  baseline.set_job_id(run.id());
  baseline.set_iteration(0);
  baseline.set_ordinal(0);
  *baseline.mutable_kernel() = run.spec().baseline();
  baseline.set_state(v1::CANDIDATE_STATE_QUEUED);
  *baseline.mutable_created_at() = NowTimestamp();
  run.original_by_hash[baseline.kernel().sha256()] = kBaselineCandidateId;
  txn.PutCandidate(baseline);
  if (!Commit(run, std::move(txn))) return;
  UpdateJobGauges();
  EnqueueProfile(run, kBaselineCandidateId);
  PumpProfiles();
}

void JobEngine::BeginIteration(Run& run, Transaction& txn, int iteration) {
  run.record.set_phase(v1::JobRecord::PHASE_SEARCHING);
  run.record.set_iteration(iteration);
  run.iteration_final = 0;
  run.iteration_started = absl::Now();
  v1::JobEvent e;
  e.mutable_iteration_started()->set_iteration(iteration);
  for (const std::string& id : run.record.beam()) e.mutable_iteration_started()->add_beam(id);
  txn.AddEvent(&run.record, std::move(e));
}

void JobEngine::StartIterationWork(Run& run) {
  EnqueueBeamRemeasures(run);
  for (int rank = 0; rank < run.record.beam_size(); ++rank) StartParent(run, rank);
  PumpProfiles();
}

void JobEngine::StartParent(Run& run, int rank) {
  const int t = run.record.iteration();
  const std::string parent_id = run.record.beam(rank);
  const std::string branch = BranchKey(run.record, rank);
  auto stored = store_->LoadPlans(run.id(), t, branch);
  if (stored.ok() && stored->has_value()) {
    ImplementPlans(run, rank, **stored);
    return;
  }
  const std::string job_id = run.id();
  const v1::Candidate& parent = run.candidates[parent_id];
  // Memory first (the experiences to show), then the planner; each waits for a slot of its stage.
  CallOnStage<v1::QueryExperiencesResponse>(
      memory_stage_, job_id, t, v1::JobRecord::PHASE_SEARCHING,
      [this, query = BuildQueryExperiencesRequest(run.spec(), job_id, t, parent)](
          Callback<v1::QueryExperiencesResponse> done) mutable {
        return clients_.memory->QueryExperiences(std::move(query), options_.agent_timeout, std::move(done));
      },
      [this, job_id, t, rank,
       plan = ReseedForCopy(BuildPlanRequest(run.spec(), job_id, t, parent), run.spec(), "plan", t, branch, parent_id,
                            0)](absl::StatusOr<v1::QueryExperiencesResponse> experiences) mutable {
        RequestPlans(job_id, t, rank, std::move(plan), std::move(experiences));
      });
}

void JobEngine::RequestPlans(const std::string& job_id, int iteration, int rank, v1::PlanRequest plan,
                             absl::StatusOr<v1::QueryExperiencesResponse> experiences) {
  if (experiences.ok()) {
    *plan.mutable_experiences() = experiences->experiences();
  } else {
    ACCELOPT_LOG(WARNING).With("job_id", job_id)
        << "memory query failed (planning without experiences): " << experiences.status().message();
  }
  CallOnStage<v1::PlanResponse>(
      planner_stage_, job_id, iteration, v1::JobRecord::PHASE_SEARCHING,
      [this, plan = std::move(plan)](Callback<v1::PlanResponse> done) mutable {
        return clients_.planner->Plan(std::move(plan), options_.agent_timeout, std::move(done));
      },
      [this, job_id, iteration, rank](absl::StatusOr<v1::PlanResponse> plans) {
        OnPlanned(job_id, iteration, rank, std::move(plans));
      });
}

void JobEngine::OnPlanned(const std::string& job_id, int iteration, int rank, absl::StatusOr<v1::PlanResponse> plans) {
  Run* run = FindActive(job_id, iteration);
  if (run == nullptr) return;
  const int n = run->spec().search().plans_per_candidate();
  v1::PlanResponse response;
  if (plans.ok()) {
    response = *std::move(plans);
    AddUsage(*run, kPlanner, response.usage());
    RecordPrompts(*run, kPlanner, response.prompts());
  } else {
    ACCELOPT_LOG(WARNING).With("job_id", job_id) << "planner call failed: " << plans.status().message();
    for (int j = 0; j < n; ++j) {
      response.add_samples()->set_error(absl::StrCat(kPlannerCallFailed, plans.status().message()));
    }
  }
  while (response.samples_size() > n) response.mutable_samples()->RemoveLast();
  while (response.samples_size() < n) response.add_samples()->set_error("the planner returned fewer plans");
  Transaction txn;
  txn.PutPlans(job_id, iteration, BranchKey(run->record, rank), response);
  if (!Commit(*run, std::move(txn))) return;
  ImplementPlans(*run, rank, response);
  AfterTransition(*run);
}

void JobEngine::ImplementPlans(Run& run, int rank, const v1::PlanResponse& plans) {
  const int t = run.record.iteration();
  const std::string parent_id = run.record.beam(rank);
  const std::string branch = BranchKey(run.record, rank);
  const v1::JobSpec& spec = run.spec();
  const int n = spec.search().plans_per_candidate();
  for (int j = 0; j < n && j < plans.samples_size(); ++j) {
    // Samples of a plan are stored together, so one stored sample means the plan was implemented.
    if (run.candidates.count(CandidateId(run.id(), t, branch, j, 0)) > 0) continue;
    const v1::PlanSample& sample = plans.samples(j);
    if (!sample.has_plan()) {
      // FAILED_PRECONDITION: the planner answered without a plan; ABORTED: the planner call failed.
      const std::string error = absl::StrCat("no plan: ", sample.error());
      OnImplemented(run.id(), t, rank, j, v1::Plan(),
                    absl::StartsWith(sample.error(), kPlannerCallFailed) ? absl::AbortedError(error)
                                                                         : absl::FailedPreconditionError(error));
      continue;
    }
    const std::string job_id = run.id();
    CallOnStage<v1::ImplementResponse>(
        executor_stage_, job_id, t, v1::JobRecord::PHASE_SEARCHING,
        [this, request = ReseedForCopy(
                   BuildImplementRequest(spec, job_id, t, run.candidates[parent_id], j, sample.plan()), spec,
                   "implement", t, branch, parent_id, j)](Callback<v1::ImplementResponse> done) mutable {
          return clients_.executor->Implement(std::move(request), options_.agent_timeout, std::move(done));
        },
        [this, job_id, t, rank, j, plan = sample.plan()](absl::StatusOr<v1::ImplementResponse> response) mutable {
          OnImplemented(job_id, t, rank, j, std::move(plan), std::move(response));
        });
  }
}

void JobEngine::OnImplemented(const std::string& job_id, int iteration, int rank, int plan_index, v1::Plan plan,
                              absl::StatusOr<v1::ImplementResponse> response) {
  Run* run = FindActive(job_id, iteration);
  if (run == nullptr) return;
  const std::string parent_id = run->record.beam(rank);
  const v1::Candidate& parent = run->candidates[parent_id];
  const int k = run->spec().search().samples_per_plan();
  if (response.ok()) {
    AddUsage(*run, kExecutor, response->usage());
    RecordPrompts(*run, kExecutor, response->prompts());
  }
  Transaction txn;
  std::vector<std::string> to_profile;
  for (int i = 0; i < k; ++i) {
    const std::string id = CandidateId(job_id, iteration, BranchKey(run->record, rank), plan_index, i);
    v1::Candidate& c = run->candidates[id];
    c.set_candidate_id(id);
    c.set_job_id(job_id);
    c.set_iteration(iteration);
    c.set_parent_id(parent_id);
    c.set_plan_index(plan_index);
    c.set_sample_index(i);
    c.set_ordinal(CandidateOrdinal(iteration, rank, plan_index, i));
    *c.mutable_plan() = plan;
    *c.mutable_created_at() = NowTimestamp();
    std::string error;
    if (!response.ok()) {
      error = std::string(response.status().message());
      const bool no_plan = absl::IsFailedPrecondition(response.status()) || absl::IsAborted(response.status());
      if (!no_plan) error = absl::StrCat("executor call failed: ", error);
      c.set_agent_call_failed(!absl::IsFailedPrecondition(response.status()));
    } else if (i >= response->samples_size()) {
      error = "the executor returned fewer samples";
    } else if (!response->samples(i).has_kernel() || response->samples(i).kernel().source().empty()) {
      error = response->samples(i).error().empty() ? "no kernel" : response->samples(i).error();
    } else if (static_cast<int64_t>(response->samples(i).kernel().source().size()) > options_.limits.max_kernel_bytes) {
      error = absl::StrCat("kernel of ", response->samples(i).kernel().source().size(),
                           " bytes exceeds max_kernel_bytes (", options_.limits.max_kernel_bytes, ")");
    }
    if (!error.empty()) {
      c.set_error(error);
      c.mutable_result()->set_verdict(v1::VERDICT_NO_KERNEL);
      c.mutable_result()->set_message(error);
      Finalize(*run, txn, c);
      continue;
    }
    v1::Kernel* kernel = c.mutable_kernel();
    kernel->set_source(response->samples(i).kernel().source());
    kernel->set_sha256(core::Sha256Hex(kernel->source()));
    kernel->set_parent_sha256(parent.kernel().sha256());
    auto [original, inserted] = run->original_by_hash.emplace(kernel->sha256(), id);
    if (!inserted) {
      v1::Candidate& first = run->candidates[original->second];
      if (first.ordinal() > c.ordinal()) {
        original->second = id;
        if (TakeOverOriginal(*run, txn, c, first)) to_profile.push_back(id);
        continue;
      }
      MarkDuplicate(c, original->second);
      Finalize(*run, txn, c);
      continue;
    }
    c.set_state(v1::CANDIDATE_STATE_QUEUED);
    txn.PutCandidate(c);
    to_profile.push_back(id);
  }
  if (!Commit(*run, std::move(txn))) return;
  for (const std::string& id : to_profile) EnqueueProfile(*run, id);
  PumpProfiles();
  AfterTransition(*run);
}

bool JobEngine::TakeOverOriginal(Run& run, Transaction& txn, v1::Candidate& c, v1::Candidate& original) {
  const std::string id = c.candidate_id();
  // The original's duplicates (all of this iteration, as the original is) repeat c from now on.
  for (auto& [other_id, other] : run.candidates) {
    if (other.iteration() != c.iteration() || other.duplicate_of() != original.candidate_id()) continue;
    MarkDuplicate(other, id);
    txn.PutCandidate(other);
  }
  switch (original.state()) {
    case v1::CANDIDATE_STATE_DONE: {
      // Judged already: the result is the kernel's, so it becomes c's, and the original's verdict is corrected.
      *c.mutable_result() = original.result();
      auto& counts = *run.job().mutable_candidates();
      const std::string judged = VerdictKey(original.result().verdict());
      if (--counts[judged] == 0) counts.erase(judged);
      counts[VerdictKey(v1::VERDICT_DUPLICATE)] += 1;
      if (run.job().best_candidate_id() == original.candidate_id()) run.job().clear_best_candidate_id();
      MarkDuplicate(original, id);
      txn.PutCandidate(original);
      v1::JobEvent e;
      e.mutable_candidate_finished()->set_candidate_id(original.candidate_id());
      e.mutable_candidate_finished()->set_verdict(v1::VERDICT_DUPLICATE);
      txn.AddEvent(&run.record, std::move(e));
      // The verdict counter saw the original's verdict once; c's stands for it, and the DUPLICATE is new.
      Judge(run, txn, c, /*count_verdict=*/false);
      if (metrics_ != nullptr) metrics_->CountCandidate(VerdictKey(v1::VERDICT_DUPLICATE));
      return false;
    }
    case v1::CANDIDATE_STATE_PROFILING: {
      // Its profile runs (or one handed to it does): the result, when it comes, is c's (OnProfiled). A restart
      // profiles c anew.
      std::string profiled = original.candidate_id();
      for (const auto& [running, owner] : run.profile_handed_to) {
        if (owner == original.candidate_id()) profiled = running;
      }
      run.profile_handed_to[profiled] = id;
      c.set_state(v1::CANDIDATE_STATE_PROFILING);
      txn.PutCandidate(c);
      break;
    }
    default:
      // Queued: the dispatcher skips it once it is DONE.
      c.set_state(v1::CANDIDATE_STATE_QUEUED);
      txn.PutCandidate(c);
      break;
  }
  MarkDuplicate(original, id);
  Finalize(run, txn, original);
  return c.state() == v1::CANDIDATE_STATE_QUEUED;
}

void JobEngine::OnBaseline(Run& run, Transaction& txn, const v1::Candidate& baseline) {
  v1::Job& job = run.job();
  if (baseline.result().verdict() == v1::VERDICT_INFRA_ERROR) {
    Stop(run, std::move(txn), v1::JOB_STATE_FAILED, v1::STOP_REASON_PROFILERS_UNAVAILABLE,
         absl::StrCat("the baseline kernel could not be profiled: ", baseline.result().message()), "");
    return;
  }
  if (baseline.result().verdict() == v1::VERDICT_PROBLEM_ERROR) {
    Stop(run, std::move(txn), v1::JOB_STATE_FAILED, v1::STOP_REASON_ERROR,
         absl::StrCat("the problem cannot be used (no kernel was at fault): ", baseline.result().message()), "");
    return;
  }
  if (!IsOk(baseline)) {
    const std::string message =
        absl::StrCat("the baseline kernel is not correct: ", VerdictKey(baseline.result().verdict()),
                     baseline.result().message().empty() ? "" : ": ", baseline.result().message());
    Stop(run, std::move(txn), v1::JOB_STATE_FAILED, v1::STOP_REASON_ERROR, message, "");
    return;
  }
  *job.mutable_baseline() = baseline.result();
  job.set_baseline_latency_ms(Latency(baseline));
  if (baseline.result().has_peak_percent()) job.set_baseline_peak_percent(baseline.result().peak_percent());
  run.candidates[kBaselineCandidateId].set_speedup_vs_baseline(1.0);
  txn.PutCandidate(run.candidates[kBaselineCandidateId]);
  SetBest(run, txn, baseline, 1.0);
  run.record.clear_beam();
  run.record.add_beam(kBaselineCandidateId);
  BeginIteration(run, txn, 1);
  if (!Commit(run, std::move(txn))) return;
  AfterTransition(run);
  if (run.active) StartIterationWork(run);
}

void JobEngine::SetBest(Run& run, Transaction& txn, const v1::Candidate& best, double speedup) {
  if (metrics_ != nullptr) metrics_->SetBestSpeedup(run.id(), speedup);
  v1::Job& job = run.job();
  job.set_best_candidate_id(best.candidate_id());
  job.set_best_latency_ms(Latency(best));
  job.set_best_speedup(speedup);
  if (best.result().has_peak_percent()) {
    job.set_best_peak_percent(best.result().peak_percent());
  } else {
    job.clear_best_peak_percent();
  }
  txn.AddEvent(&run.record, NewBestEvent(best, speedup));
}

void JobEngine::AfterTransition(Run& run) {
  if (!run.active) return;
  StopCheck stop = CheckStops(run.record.job());
  if (stop.reason != v1::STOP_REASON_UNSPECIFIED) {
    ACCELOPT_LOG(INFO).With("job_id", run.id()) << "job stops: " << stop.detail;
    if (run.job().best_candidate_id().empty()) {
      // Stopped before the baseline was measured: there is no result to report, so the job did not do its work.
      Stop(run, Transaction(), v1::JOB_STATE_FAILED, stop.reason,
           absl::StrCat("the baseline kernel was not profiled before the budget ran out (", StopReasonName(stop.reason),
                        "): ", stop.detail),
           stop.detail);
      return;
    }
    if (stop.reason == v1::STOP_REASON_BUDGET_WALL_TIME) {
      std::vector<const v1::Candidate*> candidates;
      for (const auto& [id, c] : run.candidates) candidates.push_back(&c);
      if (const std::string waiting = UnjudgedWaitingForProfiles(candidates); !waiting.empty()) {
        // The time ran out while the search's kernels waited for profiles and none was judged (every profiler
        // worker gone, say): "no improvement" would claim candidates were tried, so the job did not do its work.
        // (A spending budget, usd or tokens, ends the search by its own measure and stays an ordinary end.)
        Stop(run, Transaction(), v1::JOB_STATE_FAILED, stop.reason,
             absl::StrCat("the budget ran out (", StopReasonName(stop.reason),
                          ") before any candidate was judged: ", waiting, "; ", stop.detail),
             stop.detail);
        return;
      }
    }
    Stop(run, Transaction(), v1::JOB_STATE_SUCCEEDED, stop.reason, stop.detail, stop.detail);
    return;
  }
  if (run.record.phase() == v1::JobRecord::PHASE_SEARCHING && run.iteration_final == ExpectedPerIteration(run) &&
      run.remeasures_pending == 0) {
    FinishIteration(run);
  }
}

// ---------------------------------------------------------------------------------------------------------
// End of an iteration: next beam, memory, next iteration or the end.

void JobEngine::FinishIteration(Run& run) {
  const int t = run.record.iteration();
  std::vector<const v1::Candidate*> produced;
  for (const auto& [id, c] : run.candidates) {
    if (c.iteration() == t) produced.push_back(&c);
  }
  if (StopCheck failure = CheckIterationJudged(t, produced); failure.reason != v1::STOP_REASON_UNSPECIFIED) {
    ACCELOPT_LOG(WARNING).With("job_id", run.id()) << "job fails: " << failure.detail;
    Stop(run, Transaction(), v1::JOB_STATE_FAILED, failure.reason, failure.detail, "");
    return;
  }
  BeamPool pool;
  for (const std::string& id : run.record.beam()) pool.parents.push_back(&run.candidates[id]);
  pool.children = produced;
  const v1::SearchParams& search = run.spec().search();
  std::vector<std::string> beam = SelectBeam(search.beam_policy(), pool, search.beam_width());
  run.record.clear_beam();
  for (const std::string& id : beam) run.record.add_beam(id);
  run.record.set_phase(v1::JobRecord::PHASE_SUMMARIZING);
  run.job().set_iterations_done(t);
  Transaction txn;
  v1::JobEvent e;
  e.mutable_iteration_finished()->set_iteration(t);
  *e.mutable_iteration_finished()->mutable_usage_by_agent() = run.job().usage_by_agent();
  txn.AddEvent(&run.record, std::move(e));
  if (!Summarize(run, std::move(txn))) return;
  if (metrics_ != nullptr) {
    metrics_->iterations.Increment();
    if (run.iteration_started != absl::InfinitePast()) {
      metrics_->iteration_duration.Observe(absl::ToDoubleSeconds(absl::Now() - run.iteration_started));
    }
  }
}

void JobEngine::OnSummarized(const std::string& job_id, int iteration,
                             absl::StatusOr<v1::SummarizeIterationResponse> response, Transaction txn) {
  Run* run = FindActive(job_id, iteration, v1::JobRecord::PHASE_SUMMARIZING);
  if (run == nullptr) return;
  run->summarize_since = absl::InfiniteFuture();
  v1::Job& job = run->job();
  if (response.ok()) {
    AddUsage(*run, kSummarizer, response->usage());
    RecordPrompts(*run, kSummarizer, response->prompts());
    job.set_experiences_added(job.experiences_added() + response->added_size());
    for (const v1::Experience& x : response->added()) {
      v1::JobEvent e;
      e.mutable_experience_added()->set_experience_id(x.id());
      e.mutable_experience_added()->set_title(x.title());
      e.mutable_experience_added()->set_speedup(x.speedup());
      e.mutable_experience_added()->set_regression(x.regression());
      txn.AddEvent(&run->record, std::move(e));
    }
    for (const std::string& failure : response->failures()) {
      ACCELOPT_LOG(WARNING).With("job_id", job_id) << "summarizer failure: " << failure;
    }
  } else {
    job.set_message(absl::StrCat(
        "iteration ", iteration,
        ": experiences not stored yet, delivery continues in the background: ", response.status().message()));
    v1::JobEvent e;
    e.mutable_experiences_pending()->set_iteration(iteration);
    e.mutable_experiences_pending()->set_error(std::string(response.status().message()));
    txn.AddEvent(&run->record, std::move(e));
    ACCELOPT_LOG(WARNING).With("job_id", job_id) << job.message();
  }
  if (iteration >= run->spec().search().iterations()) {
    Stop(*run, std::move(txn), v1::JOB_STATE_SUCCEEDED, v1::STOP_REASON_ITERATIONS_DONE,
         response.ok() ? "" : job.message(), "");
    return;
  }
  BeginIteration(*run, txn, iteration + 1);
  if (!Commit(*run, std::move(txn))) return;
  AfterTransition(*run);
  if (run->active) StartIterationWork(*run);
}

void JobEngine::Finalize(Run& run, Transaction& txn, v1::Candidate& c, bool count_verdict) {
  c.set_state(v1::CANDIDATE_STATE_DONE);
  const std::string verdict = VerdictKey(c.result().verdict());
  auto& counts = *run.job().mutable_candidates();
  counts[verdict] += 1;
  if (c.iteration() == run.record.iteration() && c.iteration() > 0) ++run.iteration_final;
  txn.PutCandidate(c);
  v1::JobEvent e;
  e.mutable_candidate_finished()->set_candidate_id(c.candidate_id());
  e.mutable_candidate_finished()->set_verdict(c.result().verdict());
  if (IsOk(c)) {
    e.mutable_candidate_finished()->set_latency_ms(Latency(c));
    e.mutable_candidate_finished()->set_speedup_vs_parent(c.speedup_vs_parent());
  }
  txn.AddEvent(&run.record, std::move(e));
  if (metrics_ != nullptr && count_verdict) metrics_->CountCandidate(verdict);
}

void JobEngine::AddUsage(Run& run, const std::string& agent, const v1::TokenUsage& usage) {
  AddUsageTo(run.job().mutable_usage(), usage);
  AddUsageTo(&(*run.job().mutable_usage_by_agent())[agent], usage);
  if (metrics_ != nullptr) {
    metrics_->CountLlm(agent, static_cast<double>(usage.prompt_tokens() + usage.completion_tokens()), usage.cost_usd());
  }
}

void JobEngine::RecordPrompts(Run& run, const std::string& agent, const v1::PromptSetUsed& prompts) {
  if (prompts.name().empty()) return;  // a provider without prompts
  auto& recorded = *run.job().mutable_prompts_by_agent();
  auto it = recorded.find(agent);
  if (it != recorded.end() && it->second.sha256() != prompts.sha256()) {
    ACCELOPT_LOG(WARNING).With("job_id", run.id())
        << "the " << agent << " changed prompts during the job: " << it->second.name() << " "
        << it->second.sha256().substr(0, 12) << " -> " << prompts.name() << " " << prompts.sha256().substr(0, 12);
  }
  recorded[agent] = prompts;
}

int JobEngine::ExpectedPerIteration(const Run& run) const {
  const v1::SearchParams& s = run.spec().search();
  return run.record.beam_size() * s.plans_per_candidate() * s.samples_per_plan();
}

}  // namespace accelopt::orchestrator

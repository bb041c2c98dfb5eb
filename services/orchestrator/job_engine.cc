#include "services/orchestrator/job_engine.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "libs/core/log.h"
#include "libs/core/sha256.h"
#include "services/orchestrator/beam_selection.h"
#include "services/orchestrator/job_report.h"
#include "services/orchestrator/search_ids.h"

namespace accelopt::orchestrator {
namespace {

using google::protobuf::util::TimeUtil;

constexpr char kPlanner[] = "planner";
constexpr char kExecutor[] = "executor";
constexpr char kSummarizer[] = "summarizer";

google::protobuf::Timestamp Now() { return TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(absl::Now())); }

void AddTo(v1::TokenUsage* total, const v1::TokenUsage& usage) {
  total->set_prompt_tokens(total->prompt_tokens() + usage.prompt_tokens());
  total->set_completion_tokens(total->completion_tokens() + usage.completion_tokens());
  total->set_reasoning_tokens(total->reasoning_tokens() + usage.reasoning_tokens());
  total->set_cost_usd(total->cost_usd() + usage.cost_usd());
  total->set_requests(total->requests() + usage.requests());
  total->set_retries(total->retries() + usage.retries());
}

double Latency(const v1::Candidate& c) { return c.result().latency().mean_ms(); }

bool IsOk(const v1::Candidate& c) { return c.result().verdict() == v1::VERDICT_OK && c.result().has_latency(); }

// Ids of candidates that exist as kernels worth profiling once (not duplicates, not failed samples).
bool IsOriginalKernel(const v1::Candidate& c) {
  return !c.kernel().sha256().empty() && c.result().verdict() != v1::VERDICT_DUPLICATE &&
         c.result().verdict() != v1::VERDICT_NO_KERNEL;
}

std::string StateLabel(v1::JobState s) {
  std::string name = JobStateName(s);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

v1::JobEvent StateChangedEvent(v1::JobState state, v1::StopReason reason, const std::string& message) {
  v1::JobEvent e;
  e.mutable_state_changed()->set_state(state);
  e.mutable_state_changed()->set_stop_reason(reason);
  e.mutable_state_changed()->set_message(message);
  return e;
}

// A job record without its heavy sources, for listings.
v1::Job WithoutSources(v1::Job job) {
  job.mutable_spec()->mutable_problem()->clear_reference_source();
  job.mutable_spec()->mutable_problem()->clear_metadata_yaml();
  job.mutable_spec()->mutable_baseline()->clear_source();
  return job;
}

// Which stop condition, if any, the job has reached (budgets first, then the target).
struct StopCheck {
  v1::StopReason reason = v1::STOP_REASON_UNSPECIFIED;
  std::string detail;
};

StopCheck CheckStops(const v1::Job& job) {
  const v1::Budget& b = job.spec().budget();
  const int64_t tokens = job.usage().prompt_tokens() + job.usage().completion_tokens();
  if (b.max_usd() > 0 && job.usage().cost_usd() >= b.max_usd()) {
    return {v1::STOP_REASON_BUDGET_USD,
            absl::StrFormat("spent $%.4f of max_usd $%.4f", job.usage().cost_usd(), b.max_usd())};
  }
  if (b.max_tokens() > 0 && tokens >= b.max_tokens()) {
    return {v1::STOP_REASON_BUDGET_TOKENS, absl::StrFormat("used %d tokens of max_tokens %d", tokens, b.max_tokens())};
  }
  if (b.max_device_seconds() > 0 && job.stats().device_seconds() >= b.max_device_seconds()) {
    return {v1::STOP_REASON_BUDGET_DEVICE_SECONDS,
            absl::StrFormat("used %.1f device-seconds of max_device_seconds %.1f", job.stats().device_seconds(),
                            b.max_device_seconds())};
  }
  if (b.max_wall_seconds() > 0 && job.stats().wall_seconds() >= b.max_wall_seconds()) {
    return {v1::STOP_REASON_BUDGET_WALL_TIME,
            absl::StrFormat("ran %.1f s of max_wall_seconds %.1f", job.stats().wall_seconds(), b.max_wall_seconds())};
  }
  const double target = job.spec().stop().target_peak_percent();
  if (target > 0 && job.has_best_peak_percent() && job.best_peak_percent() >= target) {
    return {v1::STOP_REASON_TARGET_PEAK,
            absl::StrFormat("best kernel reached %.1f%% of peak (target %.1f%%)", job.best_peak_percent(), target)};
  }
  return {};
}

}  // namespace

// Posts closures onto the engine's io_context while the engine lives; afterwards drops them. Completions
// of outbound calls hold it by shared_ptr, so a late completion never touches a destroyed engine.
class JobEngine::Mailbox {
 public:
  explicit Mailbox(boost::asio::io_context* io) : io_(io) {}
  void Post(absl::AnyInvocable<void() &&> fn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (io_ == nullptr) return;
    // asio handlers must be copyable in Boost 1.74: hold the move-only closure by shared_ptr.
    auto shared = std::make_shared<absl::AnyInvocable<void() &&>>(std::move(fn));
    boost::asio::post(*io_, [shared] { std::move (*shared)(); });
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    io_ = nullptr;
  }

 private:
  std::mutex mu_;
  boost::asio::io_context* io_ ABSL_GUARDED_BY(mu_);
};

// One QUEUED or RUNNING job.
struct JobEngine::Run {
  v1::JobRecord record;
  std::map<std::string, v1::Candidate> candidates;
  // Kernel sha256 -> the candidate that was (or will be) profiled for it.
  std::map<std::string, std::string> original_by_hash;
  // Final candidates of record.iteration.
  int iteration_final = 0;
  std::deque<std::string> profile_queue;
  std::map<std::string, absl::Time> queued_since;
  std::map<uint64_t, std::shared_ptr<CallHandle>> calls;
  absl::Time running_since;
  double wall_base = 0;
  // RUNNING and not stopping: completions for inactive runs are dropped.
  bool active = false;
  std::vector<std::shared_ptr<EventSink>> watchers;
  // What the store holds for the job: the state after its last committed transition.
  v1::JobRecord committed_record;
  std::map<std::string, v1::Candidate> committed_candidates;
  // The first store error of the job. Once set the job writes nothing more but the record of its failure.
  absl::Status store_error;

  v1::Job& job() { return *record.mutable_job(); }
  const v1::JobSpec& spec() const { return record.job().spec(); }
  const std::string& id() const { return record.job().job_id(); }
};

JobEngine::JobEngine(Options options, JobStore* store, Clients clients, OrchestratorMetrics* metrics)
    : options_(std::move(options)),
      store_(store),
      clients_(clients),
      metrics_(metrics),
      mailbox_(std::make_shared<Mailbox>(&io_)),
      tick_timer_(io_),
      planner_stage_(kStagePlanner, options_.max_planner_calls, metrics),
      executor_stage_(kStageExecutor, options_.max_executor_calls, metrics),
      memory_stage_(kStageMemory, options_.max_memory_calls, metrics) {}

JobEngine::~JobEngine() {
  clients_.profilers->SetCapacityListener({});
  mailbox_->Close();
  io_.stop();
  if (thread_.joinable()) thread_.join();
  for (auto& [id, run] : runs_) {
    for (auto& [call_id, handle] : run->calls) handle->Cancel();
    for (auto& sink : run->watchers) sink->OnEnd(absl::UnavailableError("the orchestrator is shutting down"));
  }
}

void JobEngine::Post(absl::AnyInvocable<void() &&> fn) { mailbox_->Post(std::move(fn)); }

template <typename T>
Callback<T> JobEngine::OnLoop(absl::AnyInvocable<void(absl::StatusOr<T>) &&> fn) {
  return [mailbox = mailbox_, fn = std::move(fn)](absl::StatusOr<T> result) mutable {
    mailbox->Post([fn = std::move(fn), result = std::move(result)]() mutable { std::move(fn)(std::move(result)); });
  };
}

absl::Status JobEngine::Start() {
  auto records = store_->LoadJobs();
  if (!records.ok()) return records.status();
  std::vector<v1::JobRecord> queued;
  for (v1::JobRecord& record : *records) {
    ++jobs_by_state_[record.job().state()];
    if (record.job().state() == v1::JOB_STATE_RUNNING || record.job().state() == v1::JOB_STATE_QUEUED) {
      auto run = std::make_unique<Run>();
      run->record = std::move(record);
      run->committed_record = run->record;
      std::string id = run->id();
      runs_[id] = std::move(run);
    }
  }
  // Resume running jobs first (in creation order), then queue the rest.
  std::vector<Run*> order;
  for (auto& [id, run] : runs_) order.push_back(run.get());
  std::sort(order.begin(), order.end(), [](Run* a, Run* b) {
    return TimeUtil::TimestampToNanoseconds(a->record.job().created_at()) <
           TimeUtil::TimestampToNanoseconds(b->record.job().created_at());
  });
  clients_.profilers->SetCapacityListener([mailbox = mailbox_, this] { mailbox->Post([this] { PumpProfiles(); }); });
  Post([this, order] {
    for (Run* run : order) {
      if (run->record.job().state() == v1::JOB_STATE_RUNNING) {
        Resume(*run);
      } else {
        queued_.push_back(run->id());
      }
    }
    UpdateJobGauges();
    ScheduleQueued();
    Tick();
  });
  thread_ = std::thread([this] {
    auto guard = boost::asio::make_work_guard(io_);
    io_.run();
  });
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------------------
// Public API (each posts onto the loop).

void JobEngine::SubmitJob(v1::SubmitJobRequest request, Callback<v1::SubmitJobResponse> done) {
  Post([this, request = std::move(request), done = std::move(done)]() mutable {
    const std::string& key = request.idempotency_key();
    if (key.size() > 256) {
      std::move(done)(absl::InvalidArgumentError("idempotency_key: must be at most 256 characters"));
      return;
    }
    if (!key.empty()) {
      auto existing = store_->FindIdempotencyKey(key);
      if (!existing.ok()) return std::move(done)(existing.status());
      if (existing->has_value()) {
        auto job = LoadJob(**existing);
        if (!job.ok()) return std::move(done)(job.status());
        v1::SubmitJobResponse response;
        *response.mutable_job() = *std::move(job);
        response.set_created(false);
        return std::move(done)(std::move(response));
      }
    }
    if (absl::Status s = ValidateJobSpec(request.spec(), options_.limits); !s.ok()) return std::move(done)(s);

    auto run = std::make_unique<Run>();
    const std::string job_id =
        absl::StrCat("job-", core::Sha256Hex(absl::StrCat(absl::ToUnixNanos(absl::Now()), "|", ++submitted_, "|", key,
                                                          "|", reinterpret_cast<uintptr_t>(run.get())))
                                 .substr(0, 12));
    v1::Job& job = run->job();
    job.set_job_id(job_id);
    *job.mutable_spec() = ResolveJobSpec(request.spec());
    job.set_state(v1::JOB_STATE_QUEUED);
    *job.mutable_created_at() = Now();
    run->record.set_idempotency_key(key);
    run->record.set_next_sequence(1);
    Transaction txn;
    if (!key.empty()) txn.PutIdempotencyKey(key, job_id);
    txn.AddEvent(&run->record, StateChangedEvent(v1::JOB_STATE_QUEUED, v1::STOP_REASON_UNSPECIFIED, ""));
    ++jobs_by_state_[v1::JOB_STATE_QUEUED];
    Run& ref = *run;
    runs_[job_id] = std::move(run);
    if (absl::Status s = Write(ref, std::move(txn)); !s.ok()) {
      // Nothing of the job is stored: it does not exist.
      --jobs_by_state_[v1::JOB_STATE_QUEUED];
      runs_.erase(job_id);
      ACCELOPT_LOG(ERROR) << "cannot store a submitted job: " << s.message();
      return std::move(done)(absl::Status(s.code(), absl::StrCat("cannot store the job: ", s.message())));
    }
    ACCELOPT_LOG(INFO).With("job_id", job_id) << "job submitted";
    queued_.push_back(job_id);
    UpdateJobGauges();
    ScheduleQueued();
    auto submitted = LoadJob(job_id);
    if (!submitted.ok()) return std::move(done)(submitted.status());
    v1::SubmitJobResponse response;
    *response.mutable_job() = *std::move(submitted);
    response.set_created(true);
    std::move(done)(std::move(response));
  });
}

void JobEngine::GetJob(std::string job_id, Callback<v1::Job> done) {
  Post([this, job_id = std::move(job_id), done = std::move(done)]() mutable { std::move(done)(LoadJob(job_id)); });
}

void JobEngine::ListJobs(v1::ListJobsRequest request, Callback<v1::ListJobsResponse> done) {
  Post([this, request = std::move(request), done = std::move(done)]() mutable {
    auto records = store_->LoadJobs();
    if (!records.ok()) return std::move(done)(records.status());
    std::vector<v1::Job> jobs;
    std::set<int> states(request.states().begin(), request.states().end());
    for (v1::JobRecord& record : *records) {
      Run* run = FindRun(record.job().job_id());
      if (run != nullptr) UpdateWall(*run);
      const v1::Job& job = run != nullptr ? run->record.job() : record.job();
      if (!states.empty() && states.count(job.state()) == 0) continue;
      jobs.push_back(WithoutSources(job));
    }
    std::sort(jobs.begin(), jobs.end(), [](const v1::Job& a, const v1::Job& b) {
      return TimeUtil::TimestampToNanoseconds(a.created_at()) > TimeUtil::TimestampToNanoseconds(b.created_at());
    });
    const size_t limit = request.limit() > 0 ? request.limit() : 100;
    v1::ListJobsResponse response;
    for (size_t i = 0; i < jobs.size() && i < limit; ++i) *response.add_jobs() = std::move(jobs[i]);
    std::move(done)(std::move(response));
  });
}

void JobEngine::CancelJob(std::string job_id, Callback<v1::Job> done) {
  Post([this, job_id = std::move(job_id), done = std::move(done)]() mutable {
    Run* run = FindRun(job_id);
    if (run != nullptr && !IsFinished(*run)) {
      ACCELOPT_LOG(INFO).With("job_id", job_id) << "job cancelled";
      Stop(*run, Transaction(), v1::JOB_STATE_CANCELLED, v1::STOP_REASON_CANCELLED, "cancelled by a client", "");
    }
    std::move(done)(LoadJob(job_id));
  });
}

void JobEngine::ListCandidates(v1::ListCandidatesRequest request, Callback<v1::ListCandidatesResponse> done) {
  Post([this, request = std::move(request), done = std::move(done)]() mutable {
    auto candidates = CandidatesOf(request.job_id());
    if (!candidates.ok()) return std::move(done)(candidates.status());
    v1::ListCandidatesResponse response;
    for (v1::Candidate& c : *candidates) {
      if (request.verdict() != v1::VERDICT_UNSPECIFIED && c.result().verdict() != request.verdict()) continue;
      if (request.omit_sources()) c.mutable_kernel()->clear_source();
      *response.add_candidates() = std::move(c);
    }
    std::move(done)(std::move(response));
  });
}

void JobEngine::GetJobReport(std::string job_id, Callback<v1::JobReport> done) {
  Post([this, job_id = std::move(job_id), done = std::move(done)]() mutable {
    auto job = LoadJob(job_id);
    if (!job.ok()) return std::move(done)(job.status());
    auto candidates = CandidatesOf(job_id);
    if (!candidates.ok()) return std::move(done)(candidates.status());
    std::move(done)(BuildJobReport(*job, *candidates));
  });
}

void JobEngine::Watch(std::string job_id, int64_t from_sequence, std::shared_ptr<EventSink> sink) {
  Post([this, job_id = std::move(job_id), from_sequence, sink = std::move(sink)]() mutable {
    Run* run = FindRun(job_id);
    if (run == nullptr) {
      if (auto job = store_->LoadJob(job_id); !job.ok()) return sink->OnEnd(job.status());
    }
    // Every committed event is in the store, and live events are published on this loop after their
    // commit, so replaying and then subscribing leaves no gap.
    std::vector<v1::JobEvent> replay;
    absl::Status s = store_->ScanEvents(job_id, from_sequence, [&](const v1::JobEvent& e) {
      replay.push_back(e);
      if (replay.size() >= 256) {
        sink->OnEvents(replay);
        replay.clear();
      }
      return true;
    });
    if (!replay.empty()) sink->OnEvents(replay);
    if (!s.ok()) return sink->OnEnd(s);
    if (run == nullptr || IsFinished(*run)) return sink->OnEnd(absl::OkStatus());
    run->watchers.push_back(std::move(sink));
  });
}

void JobEngine::Unwatch(std::shared_ptr<EventSink> sink) {
  Post([this, sink = std::move(sink)] {
    for (auto& [id, run] : runs_) {
      auto& w = run->watchers;
      w.erase(std::remove(w.begin(), w.end(), sink), w.end());
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// Job life cycle.

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
      Summarize(run);
      break;
    default:
      if (run.candidates.count(kBaselineCandidateId) == 0) StartJob(run);
      break;
  }
  PumpProfiles();
}

void JobEngine::ScheduleQueued() {
  // Counted again after each start: a start the store refuses fails its job at once.
  auto running = [this] {
    int n = 0;
    for (auto& [id, run] : runs_) n += run->record.job().state() == v1::JOB_STATE_RUNNING ? 1 : 0;
    return n;
  };
  while (!queued_.empty() && running() < options_.max_running_jobs) {
    std::string id = queued_.front();
    queued_.pop_front();
    Run* run = FindRun(id);
    if (run == nullptr || run->record.job().state() != v1::JOB_STATE_QUEUED) continue;
    StartJob(*run);
  }
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
  *baseline.mutable_created_at() = Now();
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
  v1::JobEvent e;
  e.mutable_iteration_started()->set_iteration(iteration);
  for (const std::string& id : run.record.beam()) e.mutable_iteration_started()->add_beam(id);
  txn.AddEvent(&run.record, std::move(e));
}

void JobEngine::StartIterationWork(Run& run) {
  for (int rank = 0; rank < run.record.beam_size(); ++rank) StartParent(run, rank);
}

void JobEngine::StartParent(Run& run, int rank) {
  const int t = run.record.iteration();
  const std::string parent_id = run.record.beam(rank);
  auto stored = store_->LoadPlans(run.id(), t, parent_id);
  if (stored.ok() && stored->has_value()) {
    ImplementPlans(run, rank, **stored);
    return;
  }
  const v1::Candidate& parent = run.candidates[parent_id];
  const v1::JobSpec& spec = run.spec();
  auto query = std::make_shared<v1::QueryExperiencesRequest>();
  query->set_namespace_(MemoryNamespace(spec, run.id()));
  query->set_capacity(spec.search().memory_capacity());
  query->set_policy(spec.search().memory_policy());
  // Seeds name the parent by its kernel hash, so they do not depend on the job id.
  const std::string& parent_sha = parent.kernel().sha256();
  query->set_seed(DeriveSeed(spec.seed(), "memory", t, parent_sha, 0));
  auto plan = std::make_shared<v1::PlanRequest>();
  *plan->mutable_kernel() = parent.kernel();
  *plan->mutable_profile() = parent.result();
  *plan->mutable_problem() = spec.problem();
  plan->set_num_plans(spec.search().plans_per_candidate());
  *plan->mutable_model() = spec.models().planner();
  plan->set_seed(DeriveSeed(spec.seed(), "plan", t, parent_sha, 0));
  plan->set_job_id(run.id());
  const std::string job_id = run.id();

  // Memory first (the experiences to show), then the planner; each waits for a slot of its stage.
  memory_stage_.Enqueue([this, job_id, t, rank, query, plan]() -> bool {
    Run* run = FindActive(job_id, t);
    if (run == nullptr) return false;
    auto call_id = std::make_shared<uint64_t>(0);
    *call_id = Track(
        *run, clients_.memory->QueryExperiences(
                  *query, options_.agent_timeout,
                  OnLoop<v1::QueryExperiencesResponse>([this, job_id, t, rank, plan, call_id](
                                                           absl::StatusOr<v1::QueryExperiencesResponse> experiences) {
                    memory_stage_.Release();
                    Run* run = FindActive(job_id, t);
                    if (run == nullptr || !Untrack(*run, *call_id)) return;
                    if (experiences.ok()) {
                      *plan->mutable_experiences() = experiences->experiences();
                    } else {
                      ACCELOPT_LOG(WARNING).With("job_id", job_id)
                          << "memory query failed (planning without experiences): " << experiences.status().message();
                    }
                    planner_stage_.Enqueue([this, job_id, t, rank, plan]() -> bool {
                      Run* run = FindActive(job_id, t);
                      if (run == nullptr) return false;
                      auto call_id = std::make_shared<uint64_t>(0);
                      *call_id = Track(*run, clients_.planner->Plan(
                                                 *plan, options_.agent_timeout,
                                                 OnLoop<v1::PlanResponse>([this, job_id, t, rank, call_id](
                                                                              absl::StatusOr<v1::PlanResponse> plans) {
                                                   planner_stage_.Release();
                                                   Run* run = FindActive(job_id, t);
                                                   if (run == nullptr || !Untrack(*run, *call_id)) return;
                                                   OnPlanned(job_id, t, rank, std::move(plans));
                                                 })));
                      return true;
                    });
                  })));
    return true;
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
  } else {
    ACCELOPT_LOG(WARNING).With("job_id", job_id) << "planner call failed: " << plans.status().message();
    for (int j = 0; j < n; ++j) {
      response.add_samples()->set_error(absl::StrCat("planner call failed: ", plans.status().message()));
    }
  }
  while (response.samples_size() > n) response.mutable_samples()->RemoveLast();
  while (response.samples_size() < n) response.add_samples()->set_error("the planner returned fewer plans");
  Transaction txn;
  txn.PutPlans(job_id, iteration, run->record.beam(rank), response);
  if (!Commit(*run, std::move(txn))) return;
  ImplementPlans(*run, rank, response);
  AfterTransition(*run);
}

void JobEngine::ImplementPlans(Run& run, int rank, const v1::PlanResponse& plans) {
  const int t = run.record.iteration();
  const std::string parent_id = run.record.beam(rank);
  const v1::JobSpec& spec = run.spec();
  const int n = spec.search().plans_per_candidate();
  for (int j = 0; j < n && j < plans.samples_size(); ++j) {
    // Samples of a plan are stored together, so one stored sample means the plan was implemented.
    if (run.candidates.count(CandidateId(run.id(), t, parent_id, j, 0)) > 0) continue;
    const v1::PlanSample& sample = plans.samples(j);
    if (!sample.has_plan()) {
      OnImplemented(run.id(), t, rank, j, v1::Plan(),
                    absl::FailedPreconditionError(absl::StrCat("no plan: ", sample.error())));
      continue;
    }
    auto request = std::make_shared<v1::ImplementRequest>();
    *request->mutable_kernel() = run.candidates[parent_id].kernel();
    *request->mutable_problem() = spec.problem();
    *request->mutable_plan() = sample.plan();
    request->set_num_samples(spec.search().samples_per_plan());
    *request->mutable_model() = spec.models().executor();
    request->set_seed(DeriveSeed(spec.seed(), "implement", t, request->kernel().sha256(), j));
    request->set_job_id(run.id());
    const std::string job_id = run.id();
    executor_stage_.Enqueue([this, job_id, t, rank, j, request]() -> bool {
      Run* run = FindActive(job_id, t);
      if (run == nullptr) return false;
      auto call_id = std::make_shared<uint64_t>(0);
      *call_id = Track(*run, clients_.executor->Implement(
                                 *request, options_.agent_timeout,
                                 OnLoop<v1::ImplementResponse>([this, job_id, t, rank, j, request, call_id](
                                                                   absl::StatusOr<v1::ImplementResponse> response) {
                                   executor_stage_.Release();
                                   Run* run = FindActive(job_id, t);
                                   if (run == nullptr || !Untrack(*run, *call_id)) return;
                                   OnImplemented(job_id, t, rank, j, request->plan(), std::move(response));
                                 })));
      return true;
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
  if (response.ok()) AddUsage(*run, kExecutor, response->usage());
  Transaction txn;
  std::vector<std::string> to_profile;
  for (int i = 0; i < k; ++i) {
    const std::string id = CandidateId(job_id, iteration, parent_id, plan_index, i);
    v1::Candidate& c = run->candidates[id];
    c.set_candidate_id(id);
    c.set_job_id(job_id);
    c.set_iteration(iteration);
    c.set_parent_id(parent_id);
    c.set_plan_index(plan_index);
    c.set_sample_index(i);
    c.set_ordinal(CandidateOrdinal(iteration, rank, plan_index, i));
    *c.mutable_plan() = plan;
    *c.mutable_created_at() = Now();
    std::string error;
    if (!response.ok()) {
      error = std::string(response.status().message());
      if (!absl::IsFailedPrecondition(response.status())) error = absl::StrCat("executor call failed: ", error);
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
      c.set_duplicate_of(original->second);
      c.mutable_result()->set_verdict(v1::VERDICT_DUPLICATE);
      c.mutable_result()->set_message(absl::StrCat("same kernel as ", original->second));
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

// ---------------------------------------------------------------------------------------------------------
// Profiling.

void JobEngine::EnqueueProfile(Run& run, const std::string& candidate_id) {
  run.profile_queue.push_back(candidate_id);
  run.queued_since[candidate_id] = absl::Now();
}

void JobEngine::PumpProfiles() {
  // Round-robin over jobs with queued profiles, starting after the job served last.
  int free = clients_.profilers->FreeSlots();
  while (free > 0) {
    Run* next = nullptr;
    auto it = runs_.upper_bound(last_served_);
    for (size_t n = 0; n < runs_.size(); ++n, ++it) {
      if (it == runs_.end()) it = runs_.begin();
      if (it->second->active && !it->second->profile_queue.empty()) {
        next = it->second.get();
        break;
      }
    }
    if (next == nullptr) break;
    last_served_ = next->id();
    std::string id = next->profile_queue.front();
    next->profile_queue.pop_front();
    Dispatch(*next, id);
    free = clients_.profilers->FreeSlots();
  }
  if (metrics_ != nullptr) {
    size_t depth = 0;
    for (auto& [id, run] : runs_) depth += run->profile_queue.size();
    metrics_->SetQueueDepth(kStageProfile, static_cast<double>(depth));
  }
}

void JobEngine::Dispatch(Run& run, const std::string& candidate_id) {
  v1::Candidate& c = run.candidates[candidate_id];
  if (c.state() == v1::CANDIDATE_STATE_DONE) return;
  c.set_state(v1::CANDIDATE_STATE_PROFILING);
  if (metrics_ != nullptr) {
    metrics_->ObserveWait(kStageProfile, absl::ToDoubleSeconds(absl::Now() - run.queued_since[candidate_id]));
  }
  run.queued_since.erase(candidate_id);
  const v1::JobSpec& spec = run.spec();
  v1::ProfileRequest request;
  *request.mutable_kernel() = c.kernel();
  *request.mutable_problem() = spec.problem();
  request.set_device(spec.device());
  *request.mutable_options() = spec.profile();
  request.set_candidate_id(candidate_id);
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
    job.set_best_candidate_id(candidate_id);
    job.set_best_latency_ms(Latency(c));
    job.set_best_speedup(c.speedup_vs_baseline());
    if (c.result().has_peak_percent()) {
      job.set_best_peak_percent(c.result().peak_percent());
    } else {
      job.clear_best_peak_percent();
    }
    v1::JobEvent e;
    e.mutable_new_best()->set_candidate_id(candidate_id);
    e.mutable_new_best()->set_latency_ms(Latency(c));
    e.mutable_new_best()->set_speedup(c.speedup_vs_baseline());
    if (c.result().has_peak_percent()) e.mutable_new_best()->set_peak_percent(c.result().peak_percent());
    txn.AddEvent(&run->record, std::move(e));
    if (metrics_ != nullptr) metrics_->best_speedup.Set(c.speedup_vs_baseline());
  }
  if (!Commit(*run, std::move(txn))) return;
  PumpProfiles();
  AfterTransition(*run);
}

void JobEngine::OnBaseline(Run& run, Transaction& txn, const v1::Candidate& baseline) {
  v1::Job& job = run.job();
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
  job.set_best_candidate_id(kBaselineCandidateId);
  job.set_best_latency_ms(Latency(baseline));
  job.set_best_speedup(1.0);
  if (baseline.result().has_peak_percent()) job.set_best_peak_percent(baseline.result().peak_percent());
  v1::JobEvent e;
  e.mutable_new_best()->set_candidate_id(kBaselineCandidateId);
  e.mutable_new_best()->set_latency_ms(Latency(baseline));
  e.mutable_new_best()->set_speedup(1.0);
  if (baseline.result().has_peak_percent()) e.mutable_new_best()->set_peak_percent(baseline.result().peak_percent());
  txn.AddEvent(&run.record, std::move(e));
  run.record.clear_beam();
  run.record.add_beam(kBaselineCandidateId);
  BeginIteration(run, txn, 1);
  if (!Commit(run, std::move(txn))) return;
  AfterTransition(run);
  if (run.active) StartIterationWork(run);
}

void JobEngine::AfterTransition(Run& run) {
  if (!run.active) return;
  StopCheck stop = CheckStops(run.record.job());
  if (stop.reason != v1::STOP_REASON_UNSPECIFIED) {
    ACCELOPT_LOG(INFO).With("job_id", run.id()) << "job stops: " << stop.detail;
    Stop(run, Transaction(), v1::JOB_STATE_SUCCEEDED, stop.reason, stop.detail, stop.detail);
    return;
  }
  if (run.record.phase() == v1::JobRecord::PHASE_SEARCHING && run.iteration_final == ExpectedPerIteration(run)) {
    FinishIteration(run);
  }
}

// ---------------------------------------------------------------------------------------------------------
// End of an iteration: next beam, memory, next iteration or the end.

void JobEngine::FinishIteration(Run& run) {
  const int t = run.record.iteration();
  std::vector<const v1::Candidate*> pool;
  for (const std::string& id : run.record.beam()) pool.push_back(&run.candidates[id]);
  for (const auto& [id, c] : run.candidates) {
    if (c.iteration() == t) pool.push_back(&c);
  }
  std::vector<std::string> beam = SelectBeam(pool, run.spec().search().beam_width());
  run.record.clear_beam();
  for (const std::string& id : beam) run.record.add_beam(id);
  run.record.set_phase(v1::JobRecord::PHASE_SUMMARIZING);
  run.job().set_iterations_done(t);
  Transaction txn;
  v1::JobEvent e;
  e.mutable_iteration_finished()->set_iteration(t);
  txn.AddEvent(&run.record, std::move(e));
  if (!Commit(run, std::move(txn))) return;
  if (metrics_ != nullptr) metrics_->iterations.Increment();
  Summarize(run);
}

void JobEngine::Summarize(Run& run) {
  const int t = run.record.iteration();
  const v1::JobSpec& spec = run.spec();
  auto request = std::make_shared<v1::SummarizeIterationRequest>();
  request->set_job_id(run.id());
  request->set_namespace_(MemoryNamespace(spec, run.id()));
  request->set_iteration(t);
  *request->mutable_problem() = spec.problem();
  request->set_device(spec.device());
  request->set_max_experiences(spec.search().experiences_per_iteration());
  request->set_positive_threshold(spec.search().positive_threshold());
  request->set_negative_threshold(spec.search().negative_threshold());
  *request->mutable_model() = spec.models().summarizer();
  request->set_seed(DeriveSeed(spec.seed(), "summarize", t, "", 0));
  std::vector<const v1::Candidate*> samples;
  for (const auto& [id, c] : run.candidates) {
    if (c.iteration() != t || c.parent_id().empty() || c.kernel().source().empty()) continue;
    const v1::Verdict v = c.result().verdict();
    if (v == v1::VERDICT_DUPLICATE || v == v1::VERDICT_CANCELLED || v == v1::VERDICT_NO_KERNEL) continue;
    samples.push_back(&c);
  }
  std::sort(samples.begin(), samples.end(),
            [](const v1::Candidate* a, const v1::Candidate* b) { return a->ordinal() < b->ordinal(); });
  for (const v1::Candidate* c : samples) {
    const v1::Candidate& parent = run.candidates[c->parent_id()];
    v1::SampleResult* s = request->add_samples();
    s->set_candidate_id(c->candidate_id());
    s->set_parent_id(c->parent_id());
    s->set_plan_index(c->plan_index());
    s->set_sample_index(c->sample_index());
    *s->mutable_plan() = c->plan();
    *s->mutable_parent_kernel() = parent.kernel();
    *s->mutable_kernel() = c->kernel();
    s->set_parent_latency_ms(Latency(parent));
    *s->mutable_result() = c->result();
  }
  const std::string job_id = run.id();
  if (request->samples().empty()) {
    Post([this, job_id, t] { OnSummarized(job_id, t, v1::SummarizeIterationResponse()); });
    return;
  }
  memory_stage_.Enqueue([this, job_id, t, request]() -> bool {
    Run* run = FindRun(job_id);
    if (run == nullptr || !run->active || run->record.iteration() != t) return false;
    auto call_id = std::make_shared<uint64_t>(0);
    *call_id = Track(*run, clients_.memory->SummarizeIteration(
                               *request, options_.agent_timeout,
                               OnLoop<v1::SummarizeIterationResponse>(
                                   [this, job_id, t, call_id](absl::StatusOr<v1::SummarizeIterationResponse> r) {
                                     memory_stage_.Release();
                                     Run* run = FindRun(job_id);
                                     if (run == nullptr || !run->active || !Untrack(*run, *call_id)) return;
                                     OnSummarized(job_id, t, std::move(r));
                                   })));
    return true;
  });
}

void JobEngine::OnSummarized(const std::string& job_id, int iteration,
                             absl::StatusOr<v1::SummarizeIterationResponse> response) {
  Run* run = FindRun(job_id);
  if (run == nullptr || !run->active || run->record.phase() != v1::JobRecord::PHASE_SUMMARIZING ||
      run->record.iteration() != iteration) {
    return;
  }
  v1::Job& job = run->job();
  Transaction txn;
  if (response.ok()) {
    AddUsage(*run, kSummarizer, response->usage());
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
    job.set_message(absl::StrCat("iteration ", iteration, ": memory summarize failed: ", response.status().message()));
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

void JobEngine::Stop(Run& run, Transaction txn, v1::JobState state, v1::StopReason reason, const std::string& message,
                     const std::string& detail) {
  run.active = false;
  for (auto& [call_id, handle] : run.calls) handle->Cancel();
  run.calls.clear();
  run.profile_queue.clear();
  run.queued_since.clear();
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

void JobEngine::Tick() {
  std::vector<std::string> active;
  for (auto& [id, run] : runs_) {
    if (run->active) active.push_back(id);
  }
  for (const std::string& id : active) {
    Run* run = FindRun(id);
    if (run == nullptr) continue;
    UpdateWall(*run);
    AfterTransition(*run);
  }
  tick_timer_.expires_after(absl::ToChronoMilliseconds(options_.tick));
  tick_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Tick();
  });
}

// ---------------------------------------------------------------------------------------------------------
// Helpers.

JobEngine::Run* JobEngine::FindRun(const std::string& job_id) {
  auto it = runs_.find(job_id);
  return it == runs_.end() ? nullptr : it->second.get();
}

bool JobEngine::IsFinished(const Run& run) const {
  const v1::JobState state = run.record.job().state();
  return state != v1::JOB_STATE_QUEUED && state != v1::JOB_STATE_RUNNING;
}

JobEngine::Run* JobEngine::FindActive(const std::string& job_id, int iteration) {
  Run* run = FindRun(job_id);
  if (run == nullptr || !run->active || run->record.iteration() != iteration ||
      run->record.phase() != v1::JobRecord::PHASE_SEARCHING) {
    return nullptr;
  }
  return run;
}

void JobEngine::Finalize(Run& run, Transaction& txn, v1::Candidate& c) {
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
  if (metrics_ != nullptr) metrics_->CountCandidate(verdict);
}

void JobEngine::AddUsage(Run& run, const std::string& agent, const v1::TokenUsage& usage) {
  AddTo(run.job().mutable_usage(), usage);
  AddTo(&(*run.job().mutable_usage_by_agent())[agent], usage);
  if (metrics_ != nullptr) {
    metrics_->CountLlm(agent, static_cast<double>(usage.prompt_tokens() + usage.completion_tokens()), usage.cost_usd());
  }
}

bool JobEngine::Commit(Run& run, Transaction txn) {
  if (!run.store_error.ok()) return false;
  absl::Status s = Write(run, std::move(txn));
  if (s.ok()) return true;
  FailOnStoreError(run, s);
  return false;
}

absl::Status JobEngine::Write(Run& run, Transaction txn) {
  UpdateWall(run);
  *run.job().mutable_updated_at() = Now();
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
  // Nothing in memory goes past what is on disk: back to the last committed transition.
  SetState(run, run.committed_record.job().state());
  run.record = run.committed_record;
  run.candidates = run.committed_candidates;
  Stop(run, Transaction(), v1::JOB_STATE_FAILED, v1::STOP_REASON_STORE_ERROR,
       absl::StrCat("the job store refused a write: ", error.ToString()), "");
}

uint64_t JobEngine::Track(Run& run, std::shared_ptr<CallHandle> handle) {
  const uint64_t id = next_call_id_++;
  run.calls[id] = std::move(handle);
  return id;
}

bool JobEngine::Untrack(Run& run, uint64_t call_id) { return run.calls.erase(call_id) > 0; }

int JobEngine::ExpectedPerIteration(const Run& run) const {
  const v1::SearchParams& s = run.spec().search();
  return run.record.beam_size() * s.plans_per_candidate() * s.samples_per_plan();
}

void JobEngine::SetState(Run& run, v1::JobState state) {
  --jobs_by_state_[run.record.job().state()];
  ++jobs_by_state_[state];
  run.job().set_state(state);
}

void JobEngine::UpdateJobGauges() {
  if (metrics_ == nullptr) return;
  for (auto state : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED,
                     v1::JOB_STATE_CANCELLED}) {
    metrics_->SetJobs(StateLabel(state), jobs_by_state_[state]);
  }
}

void JobEngine::UpdateWall(Run& run) {
  if (!run.active) return;
  run.job().mutable_stats()->set_wall_seconds(run.wall_base + absl::ToDoubleSeconds(absl::Now() - run.running_since));
}

absl::StatusOr<v1::Job> JobEngine::LoadJob(const std::string& job_id) {
  if (Run* run = FindRun(job_id); run != nullptr) {
    UpdateWall(*run);
    return run->record.job();
  }
  auto record = store_->LoadJob(job_id);
  if (!record.ok()) return record.status();
  return record->job();
}

absl::StatusOr<std::vector<v1::Candidate>> JobEngine::CandidatesOf(const std::string& job_id) {
  std::vector<v1::Candidate> candidates;
  if (Run* run = FindRun(job_id); run != nullptr) {
    for (const auto& [id, c] : run->candidates) candidates.push_back(c);
  } else {
    if (auto job = store_->LoadJob(job_id); !job.ok()) return job.status();
    auto stored = store_->LoadCandidates(job_id);
    if (!stored.ok()) return stored.status();
    candidates = *std::move(stored);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const v1::Candidate& a, const v1::Candidate& b) { return a.ordinal() < b.ordinal(); });
  return candidates;
}

}  // namespace accelopt::orchestrator

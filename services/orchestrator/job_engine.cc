#include "services/orchestrator/job_engine.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "libs/core/log.h"
#include "libs/core/sha256.h"
#include "services/orchestrator/job_engine_internal.h"
#include "services/orchestrator/job_report.h"
#include "services/orchestrator/search_rules.h"

namespace accelopt::orchestrator {
namespace {

using google::protobuf::util::TimeUtil;

std::string StateLabel(v1::JobState s) {
  std::string name = JobStateName(s);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// A job record without its heavy sources, for listings.
v1::Job WithoutSources(v1::Job job) {
  job.mutable_spec()->mutable_problem()->clear_reference_source();
  job.mutable_spec()->mutable_problem()->clear_metadata_yaml();
  job.mutable_spec()->mutable_baseline()->clear_source();
  return job;
}

}  // namespace

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
  for (auto& [key, entry] : outbox_) {
    if (entry->call != nullptr) entry->call->Cancel();
  }
  for (auto& [id, run] : runs_) {
    for (auto& [call_id, handle] : run->calls) handle->Cancel();
    for (auto& sink : run->watchers) sink->OnEnd(absl::UnavailableError("the orchestrator is shutting down"));
  }
}

void JobEngine::Post(absl::AnyInvocable<void() &&> fn) { mailbox_->Post(std::move(fn)); }

absl::Status JobEngine::Start() {
  auto records = store_->LoadJobs();
  if (!records.ok()) return records.status();
  auto outbox = store_->LoadOutbox();
  if (!outbox.ok()) return outbox.status();
  for (v1::SummarizeIterationRequest& request : *outbox) {
    auto entry = std::make_unique<OutboxEntry>(io_);
    entry->request = std::move(request);
    outbox_[JobStore::OutboxKey(entry->request.job_id(), entry->request.iteration())] = std::move(entry);
  }
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
    for (auto& [key, entry] : outbox_) Deliver(key);
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
    *job.mutable_created_at() = NowTimestamp();
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
    std::vector<v1::JobEvent> events;
    absl::Status scanned = store_->ScanEvents(job_id, 0, [&](const v1::JobEvent& e) {
      if (e.has_experience_added() || e.has_iteration_finished()) events.push_back(e);
      return true;
    });
    if (!scanned.ok()) return std::move(done)(scanned);
    std::move(done)(BuildJobReport(*job, *candidates, events));
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
// The loop: admission of queued jobs, the wall-time tick, and helpers.

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

void JobEngine::Tick() {
  std::vector<std::string> active;
  for (auto& [id, run] : runs_) {
    if (run->active) active.push_back(id);
  }
  for (const std::string& id : active) {
    Run* run = FindRun(id);
    if (run == nullptr) continue;
    UpdateWall(*run);
    FlushAgentRetries(*run);
    if (run->active) CheckSummarizeWait(*run);
    if (run->active) AfterTransition(*run);
  }
  tick_timer_.expires_after(absl::ToChronoMilliseconds(options_.tick));
  tick_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Tick();
  });
}

JobEngine::Run* JobEngine::FindRun(const std::string& job_id) {
  auto it = runs_.find(job_id);
  return it == runs_.end() ? nullptr : it->second.get();
}

bool JobEngine::IsFinished(const Run& run) const {
  const v1::JobState state = run.record.job().state();
  return state != v1::JOB_STATE_QUEUED && state != v1::JOB_STATE_RUNNING;
}

JobEngine::Run* JobEngine::FindActive(const std::string& job_id, int iteration, v1::JobRecord::Phase phase) {
  Run* run = FindRun(job_id);
  if (run == nullptr || !run->active || run->record.iteration() != iteration || run->record.phase() != phase) {
    return nullptr;
  }
  return run;
}

uint64_t JobEngine::Track(Run& run, std::shared_ptr<CallHandle> handle) {
  const uint64_t id = next_call_id_++;
  run.calls[id] = std::move(handle);
  return id;
}

bool JobEngine::Untrack(Run& run, uint64_t call_id) { return run.calls.erase(call_id) > 0; }

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

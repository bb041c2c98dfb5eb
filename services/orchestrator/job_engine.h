// The job engine: owns every running job's in-memory state and drives the AccelOpt beam search. All state
// lives on one event loop (a single thread running an asio io_context); every outbound call is
// asynchronous and posts its completion back onto the loop, so no caller ever blocks on the search.
//
// Durability: every transition (a candidate's result with the job's counters, best and events; a plan
// record with its token usage; an iteration's end with the next beam) is one atomic JobStore commit.
// Store errors are sticky: a refused commit fails the job (FAILED, STOP_REASON_STORE_ERROR) at its last
// committed transition; the engine then writes nothing more for it but that failure (and if even that write
// fails, the job is failed in memory only and a restart shows its last committed state).
// Start() resumes every RUNNING and QUEUED job from the store: candidates with a stored result are never
// profiled again, candidates stored without one are re-dispatched, stored plans are not re-requested.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "accelopt/v1/job_service.pb.h"
#include "services/orchestrator/agent_clients.h"
#include "services/orchestrator/agent_retry.h"
#include "services/orchestrator/job_spec.h"
#include "services/orchestrator/job_store.h"
#include "services/orchestrator/orchestrator_metrics.h"
#include "services/orchestrator/profile_queues.h"
#include "services/orchestrator/profiler_pool.h"
#include "services/orchestrator/stage_queue.h"

namespace accelopt::orchestrator {

// Receives a job's events for WatchJob. Called from the engine's loop; implementations must not block.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Events in sequence order, without gaps.
  virtual void OnEvents(const std::vector<v1::JobEvent>& events) = 0;
  // No more events: OK when the job finished, NOT_FOUND for an unknown job, UNAVAILABLE at shutdown.
  virtual void OnEnd(const absl::Status& status) = 0;
};

class JobEngine {
 public:
  struct Options {
    int max_running_jobs = 4;
    int max_planner_calls = 16;
    int max_executor_calls = 32;
    int max_memory_calls = 4;
    SpecLimits limits;
    // Deadline of each planner, executor and memory call.
    absl::Duration agent_timeout = absl::Seconds(900);
    // Profile deadline = the spec's profile timeout (or `default_profile_timeout`) + this margin.
    absl::Duration default_profile_timeout = absl::Seconds(300);
    absl::Duration profile_margin = absl::Seconds(30);
    // How often wall time is updated and the wall-time budget checked.
    absl::Duration tick = absl::Seconds(1);
    // At most one AgentRetried event per job and agent per this interval (give-ups always get one).
    absl::Duration retry_event_interval = absl::Seconds(10);
    // Outbox delivery of iteration summaries to memory: retried with this backoff (doubling, jittered) until
    // acknowledged. A job waits at most `summarize_wait` for the acknowledgement before going on without the
    // iteration's experiences (an ExperiencesPending event; delivery continues in the background).
    absl::Duration outbox_initial_backoff = absl::Seconds(1);
    absl::Duration outbox_max_backoff = absl::Seconds(30);
    absl::Duration summarize_wait = absl::Seconds(300);
  };
  struct Clients {
    PlannerClient* planner;
    ExecutorClient* executor;
    MemoryClient* memory;
    ProfilerPool* profilers;
  };

  // Nothing is owned; everything must outlive the engine. `metrics` may be null.
  JobEngine(Options options, JobStore* store, Clients clients, OrchestratorMetrics* metrics);
  // Stops the loop without writing anything more (like a crash, from the store's point of view) and
  // cancels in-flight calls. Watchers get UNAVAILABLE.
  ~JobEngine();

  // Loads every job, resumes RUNNING and QUEUED ones and starts the loop. DATA_LOSS for a corrupt store.
  absl::Status Start();

  // Each method returns at once; `done` runs once, on the engine's loop.
  // INVALID_ARGUMENT naming the field for a bad spec (or idempotency key).
  void SubmitJob(v1::SubmitJobRequest request, Callback<v1::SubmitJobResponse> done);
  // NOT_FOUND naming the job.
  void GetJob(std::string job_id, Callback<v1::Job> done);
  // Jobs newest first; kernel and reference sources are left out of the specs.
  void ListJobs(v1::ListJobsRequest request, Callback<v1::ListJobsResponse> done);
  // Stops a QUEUED or RUNNING job (CANCELLED); a finished job is returned unchanged.
  void CancelJob(std::string job_id, Callback<v1::Job> done);
  void ListCandidates(v1::ListCandidatesRequest request, Callback<v1::ListCandidatesResponse> done);
  void GetJobReport(std::string job_id, Callback<v1::JobReport> done);
  // Replays the job's stored events from `from_sequence`, then live ones until the job finishes.
  void Watch(std::string job_id, int64_t from_sequence, std::shared_ptr<EventSink> sink);
  // Stops delivering to `sink` (the client went away). OnEnd is not called.
  void Unwatch(std::shared_ptr<EventSink> sink);

  // A listener for the agent clients' retries (AgentRetryOptions::on_retry, e.g. through an
  // AgentRetryRelay): each retry of a running job's call counts in its stats.agent_retries and becomes an
  // AgentRetried event, coalesced per agent (Options::retry_event_interval). Thread-safe; it may outlive
  // the engine (events then are dropped).
  std::function<void(const AgentRetryEvent&)> AgentRetryListener();

 private:
  // The parts of the engine (see job_engine_internal.h for the file of each).
  struct Run;
  class Mailbox;
  struct OutboxEntry;
  template <typename Response>
  using StageStart = absl::AnyInvocable<std::shared_ptr<CallHandle>(Callback<Response>) &&>;

  // The loop (job_engine.cc).
  void Post(absl::AnyInvocable<void() &&> fn);
  // Wraps a completion so it runs on the loop (only while the engine lives).
  template <typename T>
  Callback<T> OnLoop(absl::AnyInvocable<void(absl::StatusOr<T>) &&> fn);
  // One outbound call of the job on `stage`, while the job is active in (iteration, phase): waits for a slot,
  // starts the call with `start` and tracks it; on completion releases the slot and, if the job is still
  // there, hands the response to `done` on the loop.
  template <typename Response>
  void CallOnStage(StageQueue& stage, const std::string& job_id, int iteration, v1::JobRecord::Phase phase,
                   StageStart<Response> start, Callback<Response> done);
  void ScheduleQueued();
  void Tick();

  // The per-job search state machine (job_search.cc).
  void Resume(Run& run);
  void StartJob(Run& run);
  void BeginIteration(Run& run, Transaction& txn, int iteration);
  void StartIterationWork(Run& run);
  void StartParent(Run& run, int rank);
  void RequestPlans(const std::string& job_id, int iteration, int rank, v1::PlanRequest plan,
                    absl::StatusOr<v1::QueryExperiencesResponse> experiences);
  void OnPlanned(const std::string& job_id, int iteration, int rank, absl::StatusOr<v1::PlanResponse> plans);
  void ImplementPlans(Run& run, int rank, const v1::PlanResponse& plans);
  void OnImplemented(const std::string& job_id, int iteration, int rank, int plan_index, v1::Plan plan,
                     absl::StatusOr<v1::ImplementResponse> response);
  void OnBaseline(Run& run, Transaction& txn, const v1::Candidate& baseline);
  // Makes `best` the job's best (at `speedup` over the baseline), with its NewBest event.
  void SetBest(Run& run, Transaction& txn, const v1::Candidate& best, double speedup);
  void AfterTransition(Run& run);
  void FinishIteration(Run& run);
  void OnSummarized(const std::string& job_id, int iteration, absl::StatusOr<v1::SummarizeIterationResponse> response,
                    Transaction txn);
  // Marks `candidate` DONE: the job's verdict counts, the iteration's tally, its CandidateFinished event and (when
  // `count_verdict`) the verdict counter.
  void Finalize(Run& run, Transaction& txn, v1::Candidate& candidate, bool count_verdict = true);
  void AddUsage(Run& run, const std::string& agent, const v1::TokenUsage& usage);
  // Records the prompt set `agent` answered with (Job.prompts_by_agent); a change mid-job is logged.
  void RecordPrompts(Run& run, const std::string& agent, const v1::PromptSetUsed& prompts);
  int ExpectedPerIteration(const Run& run) const;

  // The profile dispatcher (profile_dispatch.cc).
  void EnqueueProfile(Run& run, const std::string& candidate_id);
  // Queues a re-measurement of each distinct beam member not yet re-measured in this iteration
  // (search.reprofile_beam, from iteration 2 on).
  void EnqueueBeamRemeasures(Run& run);
  void PumpProfiles();
  void Dispatch(Run& run, const std::string& candidate_id, absl::Time queued_since, bool remeasure);
  void OnProfiled(const std::string& job_id, const std::string& profiled_id, ProfileOutcome outcome);
  // Finalizes a candidate whose result is set: its speedups, its verdict and the job's best.
  void Judge(Run& run, Transaction& txn, v1::Candidate& c, bool count_verdict = true);
  // `c`, just produced, has the kernel of `original`, which comes later in the search's order (Candidate.ordinal):
  // `c` becomes the kernel's original and `original` its DUPLICATE, as if the executor calls had answered in
  // order, so that which of two identical kernels is profiled (and counts in the beam and the memory's pairs)
  // does not depend on which call answered first. A queued profile moves to `c`, a running one is handed to it,
  // and a finished one gives `c` its result. Returns whether `c` still needs a profile.
  bool TakeOverOriginal(Run& run, Transaction& txn, v1::Candidate& c, v1::Candidate& original);
  // A beam member's re-measurement: adds an OK latency to the candidate (its median ranks it from now on) and
  // makes the job's best the fastest by that rule.
  void OnRemeasured(const std::string& job_id, const std::string& candidate_id, int iteration, ProfileOutcome outcome);
  void CountProfile(Run& run, const ProfileOutcome& outcome);
  // Makes the fastest correct candidate (by Latency) the job's best, with a NewBest event when it changes.
  void RefreshBest(Run& run, Transaction& txn);

  // Commits, stops and store errors (job_commit.cc).
  // Stores a transition of `run` (with its record). False when the store refused it: the job has then
  // failed (FailOnStoreError) and the caller must not go on with the transition.
  bool Commit(Run& run, Transaction txn);
  // Stores a transition; on success it becomes the run's committed state and its events go to watchers.
  absl::Status Write(Run& run, Transaction txn);
  // Rolls the run back to its last committed transition and stops it FAILED with STOP_REASON_STORE_ERROR.
  void FailOnStoreError(Run& run, const absl::Status& error);
  void Stop(Run& run, Transaction txn, v1::JobState state, v1::StopReason reason, const std::string& message,
            const std::string& detail);

  // The summarization outbox (job_outbox.cc). Summarize stores the iteration's summary as an outbox entry
  // (in `txn`, the iteration's end) and delivers it once committed; false when the commit was refused.
  bool Summarize(Run& run, Transaction txn);
  void Deliver(const std::string& key);
  void OnDelivered(const std::string& key, absl::StatusOr<v1::SummarizeIterationResponse> response);
  // A job waiting too long for its summary's acknowledgement goes on without it.
  void CheckSummarizeWait(Run& run);

  // Agent retries as job events (job_retry_events.cc).
  void OnAgentRetry(const AgentRetryEvent& retry);
  // Emits the AgentRetried events of `run` whose interval has passed.
  void FlushAgentRetries(Run& run);

  // Helpers (job_engine.cc).
  Run* FindRun(const std::string& job_id);
  // The run if it is active at `iteration` in `phase`, else null (its completions are dropped).
  Run* FindActive(const std::string& job_id, int iteration,
                  v1::JobRecord::Phase phase = v1::JobRecord::PHASE_SEARCHING);
  bool IsFinished(const Run& run) const;
  uint64_t Track(Run& run, std::shared_ptr<CallHandle> handle);
  bool Untrack(Run& run, uint64_t call_id);
  void SetState(Run& run, v1::JobState state);
  void UpdateJobGauges();
  void UpdateWall(Run& run);
  absl::StatusOr<v1::Job> LoadJob(const std::string& job_id);
  absl::StatusOr<std::vector<v1::Candidate>> CandidatesOf(const std::string& job_id);

  const Options options_;
  JobStore* store_;
  Clients clients_;
  OrchestratorMetrics* metrics_;

  boost::asio::io_context io_;
  std::shared_ptr<Mailbox> mailbox_;
  boost::asio::steady_timer tick_timer_;
  std::thread thread_;

  // Loop state.
  std::map<std::string, std::unique_ptr<Run>> runs_;  // QUEUED and RUNNING jobs
  std::deque<std::string> queued_;
  ProfileQueues profile_queues_;
  std::map<std::string, std::unique_ptr<OutboxEntry>> outbox_;  // by JobStore::OutboxKey
  std::map<v1::JobState, int> jobs_by_state_;
  StageQueue planner_stage_;
  StageQueue executor_stage_;
  StageQueue memory_stage_;
  std::mt19937 random_{std::random_device{}()};  // jitter of outbox retries
  uint64_t next_call_id_ = 1;
  uint64_t submitted_ = 0;
};

}  // namespace accelopt::orchestrator

// Prometheus metrics of the orchestrator, declared in one place (stable names for dashboards):
//   accelopt_jobs{state}                          gauge: jobs by state (queued, running, succeeded, ...)
//   accelopt_iterations_total                     search iterations finished
//   accelopt_candidates_total{verdict}            candidates finished, by verdict name (OK, INCORRECT, ...)
//   accelopt_stage_queue_depth{stage}             gauge: calls waiting for a slot (planner, executor,
//                                                 memory, profile)
//   accelopt_stage_wait_seconds{stage}            histogram: time a call waited for its slot
//   accelopt_pool_slots{state="busy"|"free"}      gauge: the pool's view of profiler worker slots (the
//                                                 profilers' own gauge is accelopt_profiler_slots)
//   accelopt_dispatch_retries_total               profiles re-dispatched after a worker failure
//   accelopt_job_llm_tokens_total{agent}          tokens (prompt + completion) charged to jobs, by agent; the
//                                                 agents' own accelopt_llm_tokens_total counts the same calls
//   accelopt_job_llm_cost_usd_total{agent}        LLM cost charged to jobs, by agent
//   accelopt_jobs_finished_total{state,stop_reason}  jobs that stopped, by final state and stop reason
//                                                 (ITERATIONS_DONE, BUDGET_USD, STORE_ERROR, ...)
//   accelopt_job_duration_seconds{state}          histogram: running wall time of a finished job
//   accelopt_iteration_duration_seconds           histogram: wall time of one search iteration
//   accelopt_store_errors_total                   job store writes refused (each fails its job)
//   accelopt_job_best_speedup{job_id}             gauge: best speedup of each running job (the series ends when
//                                                 the job stops; at most max_running_jobs series)
//   accelopt_agent_call_retries_total{agent,code} planner/executor/memory calls retried, by the failed
//                                                 attempt's status code (UNAVAILABLE, DEADLINE_EXCEEDED)
#pragma once

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace accelopt::orchestrator {

// Stage names used as the `stage` label.
inline constexpr char kStagePlanner[] = "planner";
inline constexpr char kStageExecutor[] = "executor";
inline constexpr char kStageMemory[] = "memory";
inline constexpr char kStageProfile[] = "profile";

// Thread-safe (prometheus-cpp metrics are).
struct OrchestratorMetrics {
  prometheus::Family<prometheus::Gauge>& jobs;
  prometheus::Counter& iterations;
  prometheus::Family<prometheus::Counter>& candidates;
  prometheus::Family<prometheus::Gauge>& queue_depth;
  prometheus::Family<prometheus::Histogram>& wait_seconds;
  prometheus::Gauge& slots_busy;
  prometheus::Gauge& slots_free;
  prometheus::Counter& dispatch_retries;
  prometheus::Family<prometheus::Counter>& llm_tokens;
  prometheus::Family<prometheus::Counter>& llm_cost;
  prometheus::Family<prometheus::Gauge>& best_speedup;
  prometheus::Family<prometheus::Counter>& agent_retries;
  prometheus::Family<prometheus::Counter>& jobs_finished;
  prometheus::Family<prometheus::Histogram>& job_duration;
  prometheus::Histogram& iteration_duration;
  prometheus::Counter& store_errors;

  static OrchestratorMetrics Create(prometheus::Registry& registry);

  void SetJobs(absl::string_view state, double count);
  void CountCandidate(absl::string_view verdict);
  void SetQueueDepth(absl::string_view stage, double depth);
  void ObserveWait(absl::string_view stage, double seconds);
  void CountLlm(absl::string_view agent, double tokens, double cost_usd);
  void CountAgentRetry(absl::string_view agent, absl::string_view code);
  void SetBestSpeedup(absl::string_view job_id, double speedup);
  // Drops the job's per-job series (its best speedup) once it stopped.
  void ForgetJob(absl::string_view job_id);
  // A job stopped: counts it by state and stop reason and observes its running wall time.
  void CountFinishedJob(absl::string_view state, absl::string_view stop_reason, double wall_seconds);
};

}  // namespace accelopt::orchestrator

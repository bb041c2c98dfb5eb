#include "services/orchestrator/orchestrator_metrics.h"

#include "accelopt/v1/job.pb.h"
#include "libs/core/enum_name.h"

namespace accelopt::orchestrator {
namespace {

const prometheus::Histogram::BucketBoundaries& JobDurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {10,   30,   60,    300,   600,   1800,
                                                                  3600, 7200, 14400, 28800, 86400, 172800};
  return buckets;
}

}  // namespace

OrchestratorMetrics OrchestratorMetrics::Create(prometheus::Registry& registry) {
  auto& jobs = prometheus::BuildGauge().Name("accelopt_jobs").Help("Jobs by state").Register(registry);
  auto& iterations = prometheus::BuildCounter()
                         .Name("accelopt_iterations_total")
                         .Help("Search iterations finished")
                         .Register(registry);
  auto& candidates = prometheus::BuildCounter()
                         .Name("accelopt_candidates_total")
                         .Help("Candidates finished, by verdict")
                         .Register(registry);
  auto& depth = prometheus::BuildGauge()
                    .Name("accelopt_stage_queue_depth")
                    .Help("Calls waiting for a slot, by stage")
                    .Register(registry);
  auto& wait = prometheus::BuildHistogram()
                   .Name("accelopt_stage_wait_seconds")
                   .Help("Time a call waited for a slot, by stage")
                   .Register(registry);
  auto& slots = prometheus::BuildGauge()
                    .Name("accelopt_pool_slots")
                    .Help("Profiler worker slots as the orchestrator's pool sees them, by state")
                    .Register(registry);
  auto& retries = prometheus::BuildCounter()
                      .Name("accelopt_dispatch_retries_total")
                      .Help("Profiles re-dispatched to another worker after a failure")
                      .Register(registry);
  auto& tokens = prometheus::BuildCounter()
                     .Name("accelopt_job_llm_tokens_total")
                     .Help("LLM tokens (prompt + completion) charged to jobs, by agent")
                     .Register(registry);
  auto& cost = prometheus::BuildCounter()
                   .Name("accelopt_job_llm_cost_usd_total")
                   .Help("LLM cost in USD charged to jobs, by agent")
                   .Register(registry);
  auto& best = prometheus::BuildGauge()
                   .Name("accelopt_job_best_speedup")
                   .Help("Best speedup over the baseline of each running job")
                   .Register(registry);
  auto& agent_retries =
      prometheus::BuildCounter()
          .Name("accelopt_agent_call_retries_total")
          .Help("Planner, executor and memory calls retried after a failed attempt, by agent and code")
          .Register(registry);
  auto& finished = prometheus::BuildCounter()
                       .Name("accelopt_jobs_finished_total")
                       .Help("Jobs that stopped, by final state and stop reason")
                       .Register(registry);
  auto& job_duration = prometheus::BuildHistogram()
                           .Name("accelopt_job_duration_seconds")
                           .Help("Running wall time of a finished job, by final state")
                           .Register(registry);
  auto& iteration_duration =
      prometheus::BuildHistogram()
          .Name("accelopt_iteration_duration_seconds")
          .Help("Wall time of one search iteration, candidates to next beam")
          .Register(registry)
          .Add({}, prometheus::Histogram::BucketBoundaries{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200});
  auto& store_errors = prometheus::BuildCounter()
                           .Name("accelopt_store_errors_total")
                           .Help("Job store writes refused; each fails its job with STOP_REASON_STORE_ERROR")
                           .Register(registry)
                           .Add({});
  OrchestratorMetrics m{jobs,
                        iterations.Add({}),
                        candidates,
                        depth,
                        wait,
                        slots.Add({{"state", "busy"}}),
                        slots.Add({{"state", "free"}}),
                        retries.Add({}),
                        tokens,
                        cost,
                        best,
                        agent_retries,
                        finished,
                        job_duration,
                        iteration_duration,
                        store_errors};
  for (const char* state : {"queued", "running", "succeeded", "failed", "cancelled"}) m.SetJobs(state, 0);
  // Every final state and stop reason from 0, so that increase() and rate() see a job's first finish.
  const google::protobuf::EnumDescriptor* reasons = v1::StopReason_descriptor();
  for (const char* state : {"succeeded", "failed", "cancelled"}) {
    for (int i = 0; i < reasons->value_count(); ++i) {
      if (reasons->value(i)->number() == v1::STOP_REASON_UNSPECIFIED) continue;
      m.jobs_finished.Add({{"state", state}, {"stop_reason", core::ShortEnumName(*reasons->value(i))}});
    }
    m.job_duration.Add({{"state", state}}, JobDurationBuckets());
  }
  for (const char* stage : {kStagePlanner, kStageExecutor, kStageMemory, kStageProfile}) {
    m.SetQueueDepth(stage, 0);
  }
  return m;
}

void OrchestratorMetrics::SetJobs(absl::string_view state, double count) {
  jobs.Add({{"state", std::string(state)}}).Set(count);
}

void OrchestratorMetrics::CountCandidate(absl::string_view verdict) {
  candidates.Add({{"verdict", std::string(verdict)}}).Increment();
}

void OrchestratorMetrics::SetQueueDepth(absl::string_view stage, double d) {
  queue_depth.Add({{"stage", std::string(stage)}}).Set(d);
}

void OrchestratorMetrics::ObserveWait(absl::string_view stage, double seconds) {
  static const prometheus::Histogram::BucketBoundaries buckets = {0.001, 0.01, 0.1, 0.5, 1,   2.5,
                                                                  5,     10,   30,  60,  300, 900};
  wait_seconds.Add({{"stage", std::string(stage)}}, buckets).Observe(seconds);
}

void OrchestratorMetrics::CountLlm(absl::string_view agent, double tokens, double cost_usd) {
  llm_tokens.Add({{"agent", std::string(agent)}}).Increment(tokens);
  llm_cost.Add({{"agent", std::string(agent)}}).Increment(cost_usd);
}

void OrchestratorMetrics::CountAgentRetry(absl::string_view agent, absl::string_view code) {
  agent_retries.Add({{"agent", std::string(agent)}, {"code", std::string(code)}}).Increment();
}

void OrchestratorMetrics::SetBestSpeedup(absl::string_view job_id, double speedup) {
  best_speedup.Add({{"job_id", std::string(job_id)}}).Set(speedup);
}

void OrchestratorMetrics::ForgetJob(absl::string_view job_id) {
  const std::map<std::string, std::string> labels = {{"job_id", std::string(job_id)}};
  if (best_speedup.Has(labels)) best_speedup.Remove(&best_speedup.Add(labels));
}

void OrchestratorMetrics::CountFinishedJob(absl::string_view state, absl::string_view stop_reason,
                                           double wall_seconds) {
  jobs_finished.Add({{"state", std::string(state)}, {"stop_reason", std::string(stop_reason)}}).Increment();
  job_duration.Add({{"state", std::string(state)}}, JobDurationBuckets()).Observe(wall_seconds);
}

}  // namespace accelopt::orchestrator

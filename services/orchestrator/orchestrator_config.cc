#include "services/orchestrator/orchestrator_config.h"

#include "absl/strings/str_cat.h"
#include "libs/config/validate.h"
#include "libs/core/status_macros.h"

namespace accelopt::orchestrator {

void ApplyOrchestratorDefaults(v1::OrchestratorConfig* c) {
  if (c->data_dir().empty()) c->set_data_dir("./data/orchestrator");
  if (c->planner_address().empty()) c->set_planner_address("127.0.0.1:50051");
  if (c->executor_address().empty()) c->set_executor_address("127.0.0.1:50052");
  if (c->memory_address().empty()) c->set_memory_address("127.0.0.1:50053");
  if (c->profiler_addresses().empty() && c->profiler_dns().empty()) {
    c->add_profiler_addresses("127.0.0.1:50060");
  }
  if (c->dns_refresh_seconds() == 0) c->set_dns_refresh_seconds(30);
  if (c->max_dispatch_attempts() == 0) c->set_max_dispatch_attempts(3);
  if (c->max_planner_calls() == 0) c->set_max_planner_calls(16);
  if (c->max_executor_calls() == 0) c->set_max_executor_calls(32);
  if (c->max_memory_calls() == 0) c->set_max_memory_calls(4);
  if (c->max_running_jobs() == 0) c->set_max_running_jobs(4);
  if (c->max_kernel_bytes() == 0) c->set_max_kernel_bytes(256 << 10);
  if (c->max_problem_bytes() == 0) c->set_max_problem_bytes(1 << 20);
  if (c->agent_timeout_seconds() == 0) c->set_agent_timeout_seconds(900);
  if (c->worker_poll_seconds() == 0) c->set_worker_poll_seconds(1);
  if (c->stall_seconds() == 0) c->set_stall_seconds(300);
  if (c->summarize_wait_seconds() == 0) c->set_summarize_wait_seconds(300);
  v1::AgentRetryConfig* retry = c->mutable_agent_retry();
  if (retry->initial_backoff_seconds() == 0) retry->set_initial_backoff_seconds(0.2);
  if (retry->max_backoff_seconds() == 0) retry->set_max_backoff_seconds(5);
  if (retry->max_elapsed_seconds() == 0) retry->set_max_elapsed_seconds(60);
}

absl::Status ValidateOrchestratorConfig(const v1::OrchestratorConfig& c) {
  ACCELOPT_RETURN_IF_ERROR(config::ValidateAddress(c.planner_address(), "planner_address"));
  ACCELOPT_RETURN_IF_ERROR(config::ValidateAddress(c.executor_address(), "executor_address"));
  ACCELOPT_RETURN_IF_ERROR(config::ValidateAddress(c.memory_address(), "memory_address"));
  for (int i = 0; i < c.profiler_addresses_size(); ++i) {
    ACCELOPT_RETURN_IF_ERROR(
        config::ValidateAddress(c.profiler_addresses(i), absl::StrCat("profiler_addresses[", i, "]")));
  }
  if (!c.profiler_dns().empty()) {
    ACCELOPT_RETURN_IF_ERROR(config::ValidateAddress(c.profiler_dns(), "profiler_dns"));
    if (!c.profiler_addresses().empty()) {
      return absl::InvalidArgumentError("profiler_dns: give either profiler_dns or profiler_addresses");
    }
  }
  for (auto [value, name] : {std::pair{c.dns_refresh_seconds(), "dns_refresh_seconds"},
                             {c.agent_timeout_seconds(), "agent_timeout_seconds"},
                             {c.worker_poll_seconds(), "worker_poll_seconds"},
                             {c.stall_seconds(), "stall_seconds"},
                             {c.summarize_wait_seconds(), "summarize_wait_seconds"},
                             {c.agent_retry().initial_backoff_seconds(), "agent_retry.initial_backoff_seconds"},
                             {c.agent_retry().max_backoff_seconds(), "agent_retry.max_backoff_seconds"},
                             {c.agent_retry().max_elapsed_seconds(), "agent_retry.max_elapsed_seconds"}}) {
    if (!(value > 0)) return absl::InvalidArgumentError(absl::StrCat(name, ": must be > 0"));
  }
  if (c.agent_retry().max_backoff_seconds() < c.agent_retry().initial_backoff_seconds()) {
    return absl::InvalidArgumentError("agent_retry.max_backoff_seconds: must be at least initial_backoff_seconds");
  }
  for (auto [value, name] : {std::pair{c.max_dispatch_attempts(), "max_dispatch_attempts"},
                             {c.max_planner_calls(), "max_planner_calls"},
                             {c.max_executor_calls(), "max_executor_calls"},
                             {c.max_memory_calls(), "max_memory_calls"},
                             {c.max_running_jobs(), "max_running_jobs"},
                             {c.max_kernel_bytes(), "max_kernel_bytes"},
                             {c.max_problem_bytes(), "max_problem_bytes"}}) {
    if (value < 1) return absl::InvalidArgumentError(absl::StrCat(name, ": must be at least 1"));
  }
  return absl::OkStatus();
}

AgentRetryPolicy AgentRetryPolicyFromConfig(const v1::OrchestratorConfig& config) {
  const v1::AgentRetryConfig& c = config.agent_retry();
  AgentRetryPolicy policy;
  policy.initial_backoff = absl::Seconds(c.initial_backoff_seconds());
  policy.max_backoff = absl::Seconds(c.max_backoff_seconds());
  policy.max_elapsed = absl::Seconds(c.max_elapsed_seconds());
  return policy;
}

}  // namespace accelopt::orchestrator

// Prometheus metrics of the executor service (the LLM calls themselves are counted by libs/llm).
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace accelopt::executor {

struct ExecutorMetrics {
  // accelopt_executor_samples_total{outcome=kernel|model_error|no_code_block|no_kernel_function|syntax_error}.
  prometheus::Family<prometheus::Counter>& samples;
  // accelopt_executor_syntax_check_unavailable_total: kernels passed on unchecked because the check could
  // not run (the profiler still rejects a kernel that does not parse).
  prometheus::Counter& syntax_check_unavailable;

  void Sample(absl::string_view outcome) const { samples.Add({{"outcome", std::string(outcome)}}).Increment(); }

  static ExecutorMetrics Create(prometheus::Registry& registry);
};

}  // namespace accelopt::executor

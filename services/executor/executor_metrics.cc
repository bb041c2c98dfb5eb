#include "services/executor/executor_metrics.h"

namespace accelopt::executor {

ExecutorMetrics ExecutorMetrics::Create(prometheus::Registry& registry) {
  return ExecutorMetrics{
      prometheus::BuildCounter()
          .Name("accelopt_executor_samples_total")
          .Help("Kernel samples drawn, by outcome")
          .Register(registry),
      prometheus::BuildCounter()
          .Name("accelopt_executor_syntax_check_unavailable_total")
          .Help("Kernels passed on unchecked because the Python syntax check could not run")
          .Register(registry)
          .Add({}),
  };
}

}  // namespace accelopt::executor

#include "services/planner/planner_metrics.h"

namespace accelopt::planner {

PlannerMetrics PlannerMetrics::Create(prometheus::Registry& registry) {
  return PlannerMetrics{prometheus::BuildCounter()
                            .Name("accelopt_planner_samples_total")
                            .Help("Plan samples drawn, by outcome (plan or error)")
                            .Register(registry)};
}

}  // namespace accelopt::planner

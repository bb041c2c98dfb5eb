// Prometheus metrics of the planner service (the LLM calls themselves are counted by libs/llm).
#pragma once

#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace accelopt::planner {

struct PlannerMetrics {
  // accelopt_planner_samples_total{outcome=plan|error}.
  prometheus::Family<prometheus::Counter>& samples;

  void Sample(absl::string_view outcome) const { samples.Add({{"outcome", std::string(outcome)}}).Increment(); }

  static PlannerMetrics Create(prometheus::Registry& registry);
};

}  // namespace accelopt::planner

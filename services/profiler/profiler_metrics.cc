#include "services/profiler/profiler_metrics.h"

namespace accelopt::profiler {

ProfilerMetrics ProfilerMetrics::Create(prometheus::Registry& registry) {
  auto& profiles = prometheus::BuildCounter()
                       .Name("accelopt_profiler_profiles_total")
                       .Help("Profiles finished, by verdict")
                       .Register(registry);
  auto& seconds = prometheus::BuildHistogram()
                      .Name("accelopt_profiler_profile_seconds")
                      .Help("Wall time of one profile, sandbox start-up included")
                      .Register(registry)
                      .Add({}, prometheus::Histogram::BucketBoundaries{0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600});
  auto& gauges = prometheus::BuildGauge()
                     .Name("accelopt_profiler_slots")
                     .Help("Profiler slots by state (total, busy) and queued profiles")
                     .Register(registry);
  auto& rejected = prometheus::BuildCounter()
                       .Name("accelopt_profiler_rejected_total")
                       .Help("Profiles refused with RESOURCE_EXHAUSTED because the worker was full")
                       .Register(registry)
                       .Add({});
  return {profiles,
          seconds,
          gauges.Add({{"state", "total"}}),
          gauges.Add({{"state", "busy"}}),
          gauges.Add({{"state", "queued"}}),
          rejected};
}

}  // namespace accelopt::profiler

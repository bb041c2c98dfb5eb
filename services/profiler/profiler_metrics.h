// Prometheus metrics of a profiler worker, declared in one place.
#pragma once

#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace accelopt::profiler {

struct ProfilerMetrics {
  // accelopt_profiler_profiles_total{verdict}
  prometheus::Family<prometheus::Counter>& profiles;
  // accelopt_profiler_profile_seconds: wall time of one profile, sandbox included.
  prometheus::Histogram& profile_seconds;
  prometheus::Gauge& slots;
  prometheus::Gauge& slots_busy;
  prometheus::Gauge& queue_depth;
  // Profiles refused because the worker was full.
  prometheus::Counter& rejected;

  static ProfilerMetrics Create(prometheus::Registry& registry);
};

}  // namespace accelopt::profiler

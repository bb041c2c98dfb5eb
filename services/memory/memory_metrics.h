// Prometheus metrics of the memory service, declared in one place:
//   accelopt_memory_experiences_stored_total{namespace_kind="job"|"shared"}
//   accelopt_memory_summarizer_calls_total{provider, outcome="ok"|"no_optimization"|"error"}
//   accelopt_memory_query_seconds{policy="fifo"|"random"}
//   accelopt_memory_experiences (gauge: experiences stored now)
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace accelopt::memory {

// Thread-safe (prometheus-cpp metrics are).
struct MemoryMetrics {
  prometheus::Counter& stored_job;
  prometheus::Counter& stored_shared;
  prometheus::Family<prometheus::Counter>& summarizer_calls;
  prometheus::Histogram& query_fifo_seconds;
  prometheus::Histogram& query_random_seconds;
  prometheus::Gauge& experiences;

  static MemoryMetrics Create(prometheus::Registry& registry);

  // `n` experiences stored in `ns`; a namespace named after the job that wrote it is private ("job").
  void RecordStored(absl::string_view ns, absl::string_view job_id, int n);
  void RecordSummarizerCall(const std::string& provider, const std::string& outcome);
};

}  // namespace accelopt::memory

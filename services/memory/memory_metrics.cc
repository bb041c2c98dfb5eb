#include "services/memory/memory_metrics.h"

namespace accelopt::memory {

MemoryMetrics MemoryMetrics::Create(prometheus::Registry& registry) {
  auto& stored = prometheus::BuildCounter()
                     .Name("accelopt_memory_experiences_stored_total")
                     .Help("Experiences stored, by namespace kind (job: private to a job; shared)")
                     .Register(registry);
  auto& calls = prometheus::BuildCounter()
                    .Name("accelopt_memory_summarizer_calls_total")
                    .Help("Summarizer calls by provider and outcome (ok, no_optimization, error)")
                    .Register(registry);
  auto& query = prometheus::BuildHistogram()
                    .Name("accelopt_memory_query_seconds")
                    .Help("QueryExperiences latency inside the service, by policy")
                    .Register(registry);
  const prometheus::Histogram::BucketBoundaries buckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                           0.005,  0.01,    0.025,  0.05,  0.1};
  auto& count = prometheus::BuildGauge()
                    .Name("accelopt_memory_experiences")
                    .Help("Experiences stored in every namespace")
                    .Register(registry);
  return MemoryMetrics{
      stored.Add({{"namespace_kind", "job"}}),  stored.Add({{"namespace_kind", "shared"}}), calls,
      query.Add({{"policy", "fifo"}}, buckets), query.Add({{"policy", "random"}}, buckets), count.Add({})};
}

void MemoryMetrics::RecordStored(absl::string_view ns, absl::string_view job_id, int n) {
  if (n <= 0) return;
  (ns == job_id ? stored_job : stored_shared).Increment(n);
}

void MemoryMetrics::RecordSummarizerCall(const std::string& provider, const std::string& outcome) {
  summarizer_calls.Add({{"provider", provider}, {"outcome", outcome}}).Increment();
}

}  // namespace accelopt::memory

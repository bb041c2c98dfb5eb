// Prometheus metrics of LLM calls, shared by every agent in a process.
#pragma once

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace accelopt::llm {

// Families of the LLM client's metrics. Labels are bounded: agent (planner, executor, summarizer), model
// (from configs), outcome (ok, bad_response, rate_limited, server_error, client_error, timeout,
// connection_error, tls_error, config_error).
struct LlmMetrics {
  // accelopt_llm_requests_total{agent,model,outcome}: HTTP attempts, retries included.
  prometheus::Family<prometheus::Counter>& requests;
  // accelopt_llm_request_seconds{agent,model,outcome}: duration of one attempt.
  prometheus::Family<prometheus::Histogram>& request_seconds;
  // accelopt_llm_tokens_total{agent,model,kind=prompt|completion|reasoning}.
  prometheus::Family<prometheus::Counter>& tokens;
  // accelopt_llm_cost_usd_total{agent,model}.
  prometheus::Family<prometheus::Counter>& cost_usd;
  // accelopt_llm_retries_total{agent,model}.
  prometheus::Family<prometheus::Counter>& retries;
  // accelopt_llm_unpriced_responses_total{agent,model}: answers for a model missing from the price table.
  prometheus::Family<prometheus::Counter>& unpriced_responses;
  // accelopt_llm_http_exchanges_total{reused=true|false}: answered HTTP attempts, by whether they went over a
  // kept-alive connection.
  prometheus::Family<prometheus::Counter>& http_exchanges;

  // Registers the families (idempotent on one registry: prometheus-cpp merges identical families).
  static LlmMetrics Create(prometheus::Registry& registry);
};

}  // namespace accelopt::llm

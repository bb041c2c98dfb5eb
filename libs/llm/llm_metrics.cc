#include "libs/llm/llm_metrics.h"

namespace accelopt::llm {

LlmMetrics LlmMetrics::Create(prometheus::Registry& registry) {
  return LlmMetrics{
      prometheus::BuildCounter()
          .Name("accelopt_llm_requests_total")
          .Help("LLM HTTP attempts by agent, model and outcome (retries included)")
          .Register(registry),
      prometheus::BuildHistogram()
          .Name("accelopt_llm_request_seconds")
          .Help("Duration of one LLM HTTP attempt")
          .Register(registry),
      prometheus::BuildCounter()
          .Name("accelopt_llm_tokens_total")
          .Help("Tokens reported by LLM endpoints, by kind (prompt, completion, reasoning)")
          .Register(registry),
      prometheus::BuildCounter()
          .Name("accelopt_llm_cost_usd_total")
          .Help("Dollars spent on LLM calls, from the configured price table")
          .Register(registry),
      prometheus::BuildCounter()
          .Name("accelopt_llm_retries_total")
          .Help("LLM requests retried after a 429, a 5xx, a timeout or a connection error")
          .Register(registry),
      prometheus::BuildCounter()
          .Name("accelopt_llm_unpriced_responses_total")
          .Help("LLM answers for a model missing from the price table (counted at cost 0)")
          .Register(registry),
      prometheus::BuildCounter()
          .Name("accelopt_llm_http_exchanges_total")
          .Help("Answered LLM HTTP attempts, by whether they reused a kept-alive connection")
          .Register(registry),
  };
}

}  // namespace accelopt::llm

// The "openai" model provider: an OpenAI-compatible Chat Completions client (POST {base_url}/chat/completions)
// with retries, a per-endpoint concurrency limit, and token and cost accounting.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "accelopt/v1/config.pb.h"
#include "libs/llm/async_semaphore.h"
#include "libs/llm/endpoint_table.h"
#include "libs/llm/http_transport.h"
#include "libs/llm/llm_metrics.h"
#include "libs/llm/provider.h"
#include "prometheus/registry.h"

namespace accelopt::llm {

// Use ONE client per process and give it to every agent: the concurrency limit per endpoint (base URL) is
// kept here and shared by all its callers. Calls run as coroutines on the client's own io_context threads, so
// callers (gRPC handlers included) never block: waiting for a permit or a backoff suspends a coroutine, not a
// thread. Thread-safe.
//
// Per call: the model spec is resolved against the configured endpoints (EndpointTable: the job names an
// endpoint and a model, never where the key goes); the key is read from the endpoint's variable or file and
// sent as `Authorization: Bearer ...` (or the endpoint's api_key_header); it never appears in logs or errors
// (an echo in an error body is redacted).
// Attempts (llm.max_attempts) retry 429, 5xx, timeouts and connection errors with exponential backoff and
// full jitter (llm.initial_backoff_seconds doubling up to llm.max_backoff_seconds), or exactly the delay a
// Retry-After header asks for. Other 4xx, TLS verification failures and unusable answers are not retried.
//
// Outcome codes: INVALID_ARGUMENT (the spec names no configured endpoint or model, or an unallowed client
// endpoint; bad model.extra_body), FAILED_PRECONDITION (the key's variable or file is unset; TLS verification failed),
// RESOURCE_EXHAUSTED (429 after the last attempt), UNAVAILABLE (5xx or connection errors after the last attempt),
// DEADLINE_EXCEEDED (timeout after the last attempt), UNAUTHENTICATED / PERMISSION_DENIED / NOT_FOUND /
// INVALID_ARGUMENT / FAILED_PRECONDITION (other 4xx), DATA_LOSS (a 2xx answer that is not JSON, has no choices or no
// content).
class OpenAiClient final : public ModelProvider {
 public:
  struct Options {
    // Defaults applied (config::ApplyLlmDefaults).
    v1::LlmConfig config;
    ProxyConfig proxy;
    // Where the llm metrics are registered.
    std::shared_ptr<prometheus::Registry> registry;
    // Threads running the client's io_context.
    int io_threads = 1;
  };

  // INVALID_ARGUMENT naming llm.ca_file when it cannot be loaded, or the llm.endpoints field that is wrong.
  static absl::StatusOr<std::unique_ptr<OpenAiClient>> Create(Options options);
  // Stops the io threads. Destroy only after every caller's calls have completed.
  ~OpenAiClient() override;

  void Complete(CompletionRequest request, CompletionCallback done) override;
  // EndpointTable::Resolve's verdict on `spec`.
  absl::Status ValidateSpec(const v1::ModelSpec& spec) const override;

 private:
  OpenAiClient(Options options, EndpointTable endpoints, std::unique_ptr<boost::asio::ssl::context> tls);
  boost::asio::awaitable<Metered<Completion>> Run(CompletionRequest request);
  AsyncSemaphore& LimiterFor(const ResolvedModel& resolved);
  absl::Duration Backoff(int retry);
  void Account(const CompletionRequest& request, const ResolvedModel& resolved, int64_t prompt, int64_t completion,
               int64_t reasoning, v1::TokenUsage* usage);

  const Options options_;
  const EndpointTable endpoints_;
  const LlmMetrics metrics_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  HttpTransport transport_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<AsyncSemaphore>> limiters_ ABSL_GUARDED_BY(mu_);
  uint64_t jitter_state_ ABSL_GUARDED_BY(mu_);
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

}  // namespace accelopt::llm

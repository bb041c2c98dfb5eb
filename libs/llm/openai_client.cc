#include "libs/llm/openai_client.h"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdlib>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libs/core/splitmix64.h"
#include "libs/llm/chat_json.h"
#include "libs/llm/retry_after.h"

namespace accelopt::llm {
namespace {

namespace asio = boost::asio;

constexpr size_t kErrorBodyBytes = 300;
// An attempt with less time than this before the agent's deadline is not started (it could not finish).
constexpr absl::Duration kMinAttemptTime = absl::Milliseconds(100);
// Upper bound on a Retry-After delay we are willing to sleep.
constexpr absl::Duration kMaxRetryAfter = absl::Minutes(10);

// What one HTTP attempt amounted to.
struct Attempt {
  std::string outcome;  // metrics label
  absl::Status status;  // the error if this were the last attempt
  bool retryable = false;
  std::optional<absl::Duration> retry_after;
};

absl::StatusCode CodeForHttpStatus(int status) {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    default:
      return status >= 500 ? absl::StatusCode::kUnavailable : absl::StatusCode::kFailedPrecondition;
  }
}

Attempt ClassifyHttpError(const HttpResponse& response, const std::string& where) {
  Attempt a;
  std::string body = response.body.substr(0, kErrorBodyBytes);
  if (response.body.size() > kErrorBodyBytes) body += "...";
  a.status = absl::Status(CodeForHttpStatus(response.status),
                          absl::StrCat("HTTP ", response.status, " from ", where, ": ", body));
  if (response.status == 429) {
    a.outcome = "rate_limited";
    a.retryable = true;
  } else if (response.status >= 500) {
    a.outcome = "server_error";
    a.retryable = true;
  } else {
    a.outcome = "client_error";
  }
  if (a.retryable && !response.retry_after.empty()) {
    a.retry_after = ParseRetryAfter(response.retry_after, absl::Now());
  }
  return a;
}

Attempt ClassifyTransportError(const absl::Status& status) {
  Attempt a;
  a.status = status;
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
      a.outcome = "timeout";
      a.retryable = true;
      break;
    case absl::StatusCode::kUnavailable:
      a.outcome = "connection_error";
      a.retryable = true;
      break;
    default:
      a.outcome = "tls_error";
      break;
  }
  return a;
}

absl::Status Redact(const absl::Status& status, const std::string& secret) {
  if (secret.empty() || status.message().find(secret) == absl::string_view::npos) return status;
  return absl::Status(status.code(), absl::StrReplaceAll(status.message(), {{secret, "[redacted]"}}));
}

absl::Status WithPrefix(const absl::Status& status, absl::string_view prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<OpenAiClient>> OpenAiClient::Create(Options options) {
  auto tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  tls->set_verify_mode(asio::ssl::verify_peer);
  boost::system::error_code ec;
  if (options.config.ca_file().empty()) {
    tls->set_default_verify_paths(ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot load the system CA store: ", ec.message()));
  } else {
    tls->load_verify_file(options.config.ca_file(), ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("llm.ca_file: cannot load '", options.config.ca_file(), "': ", ec.message()));
    }
  }
  absl::StatusOr<EndpointTable> endpoints = EndpointTable::Create(options.config);
  if (!endpoints.ok()) return endpoints.status();
  if (options.registry == nullptr) options.registry = std::make_shared<prometheus::Registry>();
  return std::unique_ptr<OpenAiClient>(new OpenAiClient(std::move(options), *std::move(endpoints), std::move(tls)));
}

OpenAiClient::OpenAiClient(Options options, EndpointTable endpoints, std::unique_ptr<asio::ssl::context> tls)
    : options_(std::move(options)),
      endpoints_(std::move(endpoints)),
      metrics_(LlmMetrics::Create(*options_.registry)),
      tls_(std::move(tls)),
      transport_(*tls_, options_.proxy, absl::Seconds(options_.config.idle_connection_seconds())),
      jitter_state_(std::random_device{}()),
      work_(asio::make_work_guard(io_)) {
  for (int i = 0; i < std::max(1, options_.io_threads); ++i) threads_.emplace_back([this] { io_.run(); });
}

OpenAiClient::~OpenAiClient() {
  work_.reset();
  io_.stop();
  for (std::thread& t : threads_) t.join();
  transport_.CloseIdleConnections();  // their sockets belong to io_
}

void OpenAiClient::Complete(CompletionRequest request, CompletionCallback done) {
  asio::co_spawn(io_, Run(std::move(request)),
                 [done = std::move(done)](std::exception_ptr error, Metered<Completion> result) mutable {
                   if (error) result.value = absl::InternalError("llm client: unexpected exception");
                   done(std::move(result));
                 });
}

absl::Status OpenAiClient::ValidateSpec(const v1::ModelSpec& spec) const { return endpoints_.Resolve(spec).status(); }

AsyncSemaphore& OpenAiClient::LimiterFor(const ResolvedModel& resolved) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<AsyncSemaphore>& limiter = limiters_[absl::StrCat(resolved.endpoint, " ", resolved.url.Redacted())];
  if (limiter == nullptr) limiter = std::make_unique<AsyncSemaphore>(resolved.max_concurrency);
  return *limiter;
}

absl::Duration OpenAiClient::Backoff(int retry) {
  double cap = std::min(options_.config.max_backoff_seconds(),
                        options_.config.initial_backoff_seconds() * std::ldexp(1.0, std::min(retry - 1, 30)));
  absl::MutexLock lock(&mu_);
  // Full jitter: uniform in [0, cap].
  uint64_t z = core::SplitMix64(jitter_state_);
  jitter_state_ += 0x9E3779B97F4A7C15ULL;  // the generator's increment: the next state
  return absl::Seconds(cap * static_cast<double>(z >> 11) / static_cast<double>(1ULL << 53));
}

void OpenAiClient::Account(const CompletionRequest& request, const ResolvedModel& resolved, int64_t prompt,
                           int64_t completion, int64_t reasoning, v1::TokenUsage* usage) {
  const std::string& model = resolved.metric_model;
  usage->set_prompt_tokens(usage->prompt_tokens() + prompt);
  usage->set_completion_tokens(usage->completion_tokens() + completion);
  usage->set_reasoning_tokens(usage->reasoning_tokens() + reasoning);
  for (auto [kind, n] : {std::pair{"prompt", prompt}, {"completion", completion}, {"reasoning", reasoning}}) {
    metrics_.tokens.Add({{"agent", request.agent}, {"model", model}, {"kind", kind}}).Increment(n);
  }
  if (!resolved.price.has_value()) {
    metrics_.unpriced_responses.Add({{"agent", request.agent}, {"model", model}}).Increment();
    return;
  }
  double cost =
      (prompt * resolved.price->prompt_usd_per_mtok() + completion * resolved.price->completion_usd_per_mtok()) / 1e6;
  usage->set_cost_usd(usage->cost_usd() + cost);
  metrics_.cost_usd.Add({{"agent", request.agent}, {"model", model}}).Increment(cost);
}

asio::awaitable<Metered<Completion>> OpenAiClient::Run(CompletionRequest request) {
  Metered<Completion> out;
  absl::StatusOr<ResolvedModel> resolved = endpoints_.Resolve(request.model);
  const std::string model = resolved.ok() ? resolved->metric_model : "other";
  auto count_failure = [&](const char* outcome) {
    metrics_.requests.Add({{"agent", request.agent}, {"model", model}, {"outcome", outcome}}).Increment();
  };
  if (!resolved.ok()) {
    count_failure("config_error");
    out.value = resolved.status();
    co_return out;
  }
  absl::StatusOr<std::string> api_key = ReadApiKey(*resolved);
  if (!api_key.ok()) {
    count_failure("config_error");
    out.value = api_key.status();
    co_return out;
  }
  std::optional<uint64_t> seed;
  if (request.seed.has_value()) seed = *request.seed & 0x7FFFFFFF;  // every server accepts a 31-bit seed
  absl::StatusOr<std::string> body = BuildChatRequestBody(resolved->spec, request.system, request.user, seed);
  if (!body.ok()) {
    count_failure("config_error");
    out.value = body.status();
    co_return out;
  }
  HttpPost post;
  post.url = resolved->url;
  post.target = resolved->target;
  post.body = *std::move(body);
  if (!api_key->empty()) {
    if (resolved->key_header.empty()) {
      post.headers.emplace_back("Authorization", absl::StrCat("Bearer ", *api_key));
    } else {
      post.headers.emplace_back(resolved->key_header, *api_key);
    }
  }
  for (const auto& header : resolved->headers) post.headers.push_back(header);
  double timeout_seconds = resolved->spec.timeout_seconds() > 0 ? resolved->spec.timeout_seconds()
                                                                : options_.config.default_timeout_seconds();
  const absl::Duration attempt_timeout = absl::Seconds(timeout_seconds);
  const std::string where = absl::StrCat(resolved->url.Redacted(), "/chat/completions");
  AsyncSemaphore& limiter = LimiterFor(*resolved);
  const int max_attempts = std::max(1, options_.config.max_attempts());

  for (int attempt = 1;; ++attempt) {
    co_await limiter.Acquire();
    // Each attempt ends by the agent's deadline, so the usage of this call still reaches its caller.
    const absl::Duration left = request.deadline - absl::Now();
    if (left < kMinAttemptTime) {
      limiter.Release();
      count_failure("timeout");
      out.value = absl::DeadlineExceededError(
          absl::StrCat("the agent's answer was due (answer_by) before attempt ", attempt, " to ", where));
      co_return out;
    }
    post.timeout = std::min(attempt_timeout, left);
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<HttpResponse> response = co_await transport_.Post(post);
    limiter.Release();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.usage.set_requests(out.usage.requests() + 1);
    if (response.ok()) {
      metrics_.http_exchanges.Add({{"reused", response->reused_connection ? "true" : "false"}}).Increment();
    }

    Attempt result;
    if (!response.ok()) {
      result = ClassifyTransportError(response.status());
    } else if (response->status < 200 || response->status >= 300) {
      result = ClassifyHttpError(*response, where);
    } else {
      ChatResponse parsed = ParseChatResponse(response->body);
      Account(request, *resolved, parsed.usage.prompt_tokens, parsed.usage.completion_tokens,
              parsed.usage.reasoning_tokens, &out.usage);
      result.outcome = parsed.status.ok() ? "ok" : "bad_response";
      if (parsed.status.ok()) {
        out.value = Completion{std::move(parsed.content), std::move(parsed.reasoning)};
      } else {
        out.value = WithPrefix(parsed.status, absl::StrCat(where, ": "));
      }
    }
    metrics_.requests.Add({{"agent", request.agent}, {"model", model}, {"outcome", result.outcome}}).Increment();
    metrics_.request_seconds
        .Add({{"agent", request.agent}, {"model", model}, {"outcome", result.outcome}},
             prometheus::Histogram::BucketBoundaries{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600})
        .Observe(seconds);
    if (result.outcome == "ok" || result.outcome == "bad_response") co_return out;
    if (!result.retryable || attempt >= max_attempts) {
      absl::Status final_status = Redact(result.status, *api_key);
      if (attempt > 1) final_status = WithPrefix(final_status, absl::StrCat("after ", attempt, " attempts: "));
      out.value = final_status;
      co_return out;
    }
    absl::Duration delay =
        result.retry_after.has_value() ? std::min(*result.retry_after, kMaxRetryAfter) : Backoff(attempt);
    if (absl::Now() + delay + kMinAttemptTime >= request.deadline) {  // no time for another attempt
      out.value = WithPrefix(
          Redact(result.status, *api_key),
          absl::StrCat("after ", attempt, attempt == 1 ? " attempt" : " attempts", ", none left before answer_by: "));
      co_return out;
    }
    out.usage.set_retries(out.usage.retries() + 1);
    metrics_.retries.Add({{"agent", request.agent}, {"model", model}}).Increment();
    asio::steady_timer timer(co_await asio::this_coro::executor, absl::ToChronoNanoseconds(delay));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace accelopt::llm

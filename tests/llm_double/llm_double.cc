#include "tests/llm_double/llm_double.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/notification.h"

namespace accelopt::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;
using boost::system::error_code;
using nlohmann::json;
using tcp = asio::ip::tcp;

class LlmDouble::Impl {
 public:
  Impl(DoubleScript script, std::optional<TlsIdentity> tls, absl::Duration idle_close)
      : idle_close_(idle_close), script_(std::move(script)) {
    if (tls.has_value()) {
      tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
      tls_identity_ = std::move(tls);
    }
  }

  absl::Status LoadTls() {
    if (tls_ == nullptr) return absl::OkStatus();
    error_code ec;
    tls_->use_certificate_chain(asio::buffer(tls_identity_->cert_pem), ec);
    if (!ec) tls_->use_private_key(asio::buffer(tls_identity_->key_pem), asio::ssl::context::pem, ec);
    if (ec) return absl::InvalidArgumentError(absl::StrCat("double TLS identity: ", ec.message()));
    return absl::OkStatus();
  }

  absl::StatusOr<int> Listen(const std::string& host, int port) {
    error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address(host, ec), static_cast<uint16_t>(port));
    if (ec) return absl::InvalidArgumentError(absl::StrCat("double: bad host ", host));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return absl::UnavailableError(absl::StrCat("double: cannot listen on ", host, ":", port, ": ", ec.message()));
    return acceptor_.local_endpoint().port();
  }

  void Run(int threads) {
    asio::co_spawn(io_, Accept(), asio::detached);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  void Stop() {
    io_.stop();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  void SetScript(DoubleScript script) {
    absl::MutexLock lock(&mu_);
    script_ = std::move(script);
    uses_.clear();
    seen_bodies_.clear();
  }

  std::vector<RecordedRequest> Requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  int request_count() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(requests_.size());
  }
  int max_in_flight() const {
    absl::MutexLock lock(&mu_);
    return max_in_flight_;
  }
  int connections_accepted() const {
    absl::MutexLock lock(&mu_);
    return connections_accepted_;
  }
  int connections_open() const {
    absl::MutexLock lock(&mu_);
    return connections_open_;
  }

 private:
  using Response = http::response<http::string_body>;

  asio::awaitable<void> Accept() {
    for (;;) {
      error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec) co_return;
      {
        absl::MutexLock lock(&mu_);
        ++connections_accepted_;
        ++connections_open_;
      }
      if (tls_ != nullptr) {
        asio::co_spawn(io_, ServeTls(std::move(socket)), asio::detached);
      } else {
        asio::co_spawn(io_, Serve(beast::tcp_stream(std::move(socket))), asio::detached);
      }
    }
  }

  asio::awaitable<void> ServeTls(tcp::socket socket) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls_);
    error_code ec;
    co_await stream.async_handshake(asio::ssl::stream_base::server, asio::redirect_error(use_awaitable, ec));
    if (ec) co_return;  // e.g. the client rejected our certificate
    co_await Serve(std::move(stream));
  }

  template <typename Stream>
  asio::awaitable<void> Serve(Stream stream) {
    struct Open {
      Impl* impl;
      ~Open() {
        absl::MutexLock lock(&impl->mu_);
        --impl->connections_open_;
      }
    } open{this};
    beast::flat_buffer buffer;
    for (bool first = true;; first = false) {
      http::request<http::string_body> request;
      error_code ec;
      if (!first && idle_close_ > absl::ZeroDuration()) {
        beast::get_lowest_layer(stream).expires_after(absl::ToChronoNanoseconds(idle_close_));
      }
      co_await http::async_read(stream, buffer, request, asio::redirect_error(use_awaitable, ec));
      beast::get_lowest_layer(stream).expires_never();
      if (ec) co_return;
      std::optional<Response> response = co_await Handle(request);
      if (!response.has_value()) co_return;  // a fault that drops the connection
      response->keep_alive(request.keep_alive());
      response->prepare_payload();
      co_await http::async_write(stream, *response, asio::redirect_error(use_awaitable, ec));
      if (ec || !request.keep_alive()) co_return;
    }
  }

  static Response JsonResponse(int status, std::string body) {
    Response r{static_cast<http::status>(status), 11};
    r.set(http::field::content_type, "application/json");
    r.body() = std::move(body);
    return r;
  }

  asio::awaitable<std::optional<Response>> Handle(const http::request<http::string_body>& request) {
    std::string target(request.target());
    if (request.method() == http::verb::get && target == "/_double/requests")
      co_return JsonResponse(200, RequestsJson());
    if (request.method() == http::verb::get && target == "/_double/stats") {
      co_return JsonResponse(200, json{{"requests", request_count()},
                                       {"max_in_flight", max_in_flight()},
                                       {"connections", connections_accepted()}}
                                      .dump());
    }
    if (request.method() == http::verb::put && target == "/_double/script") {
      absl::StatusOr<DoubleScript> script = ParseDoubleScript(request.body());
      if (!script.ok()) co_return JsonResponse(400, json{{"error", std::string(script.status().message())}}.dump());
      SetScript(*std::move(script));
      co_return JsonResponse(200, "{}");
    }
    const std::string path = target.substr(0, target.find('?'));  // query parameters (Azure's api-version)
    if (request.method() != http::verb::post || !absl::EndsWith(path, "/chat/completions")) {
      co_return JsonResponse(404, R"({"error":{"message":"not found"}})");
    }
    auto [reply, record] = Record(request);
    struct InFlight {
      Impl* impl;
      ~InFlight() {
        absl::MutexLock lock(&impl->mu_);
        --impl->in_flight_;
      }
    } in_flight{this};
    auto executor = co_await asio::this_coro::executor;
    const absl::Duration delay = ReplyDelay(reply, record.index);
    if (delay > absl::ZeroDuration() || reply.fault == DoubleReply::Fault::kHang) {
      asio::steady_timer timer(executor, reply.fault == DoubleReply::Fault::kHang ? std::chrono::hours(1)
                                                                                  : absl::ToChronoNanoseconds(delay));
      error_code ec;
      co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
    }
    co_return Answer(reply, record);
  }

  // The reply's delay, or one drawn from [delay, max_delay] by a SplitMix64 hash of the request number.
  static absl::Duration ReplyDelay(const DoubleReply& reply, int index) {
    if (reply.max_delay <= reply.delay) return reply.delay;
    uint64_t z = 0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(index) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) / static_cast<double>(1ULL << 53);
    return reply.delay + (reply.max_delay - reply.delay) * unit;
  }

  // Picks the reply and records the request, under the lock.
  std::pair<DoubleReply, RecordedRequest> Record(const http::request<http::string_body>& request) {
    RecordedRequest r;
    r.method = std::string(request.method_string());
    r.target = std::string(request.target());
    for (const auto& field : request) {
      r.headers[absl::AsciiStrToLower(std::string(field.name_string()))] = std::string(field.value());
    }
    r.body = request.body();
    json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_object()) {
      r.model = body.value("model", "");
      if (body.contains("seed") && body["seed"].is_number_integer()) r.seed = body["seed"].get<int64_t>();
      if (body.contains("messages") && body["messages"].is_array()) {
        for (const json& m : body["messages"]) {
          if (!m.is_object() || !m.contains("content") || !m["content"].is_string()) continue;
          std::string role = m.value("role", "");
          (role == "system" ? r.system : r.user) += m["content"].get<std::string>();
        }
      }
    }
    r.received = absl::Now();
    absl::MutexLock lock(&mu_);
    r.index = static_cast<int>(requests_.size());
    max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
    requests_.push_back(r);
    int occurrence = seen_bodies_[r.body]++;
    if (FailsDeterministically(script_, r.body, occurrence)) return {script_.failure, r};
    uses_.resize(script_.rules.size());
    for (size_t i = 0; i < script_.rules.size(); ++i) {
      const DoubleRule& rule = script_.rules[i];
      if (rule.times > 0 && uses_[i] >= rule.times) continue;
      if (!rule.match.empty() && r.system.find(rule.match) == std::string::npos &&
          r.user.find(rule.match) == std::string::npos) {
        continue;
      }
      ++uses_[i];
      return {rule.reply, r};
    }
    return {script_.fallback, r};
  }

  static std::optional<Response> Answer(const DoubleReply& reply, const RecordedRequest& record) {
    using Fault = DoubleReply::Fault;
    if (reply.fault == Fault::kCloseConnection || reply.fault == Fault::kHang) return std::nullopt;
    if (reply.status != 200) {
      std::string body = reply.body.empty()
                             ? json{{"error", {{"message", "scripted failure"}, {"code", reply.status}}}}.dump()
                             : reply.body;
      Response r = JsonResponse(reply.status, std::move(body));
      if (!reply.retry_after.empty()) r.set(http::field::retry_after, reply.retry_after);
      return r;
    }
    json usage = {{"prompt_tokens", reply.prompt_tokens},
                  {"completion_tokens", reply.completion_tokens},
                  {"total_tokens", reply.prompt_tokens + reply.completion_tokens},
                  {"completion_tokens_details", {{"reasoning_tokens", reply.reasoning_tokens}}}};
    json message = {{"role", "assistant"}};
    if (reply.fault != Fault::kNoContent) {
      message["content"] = absl::StrReplaceAll(
          reply.content, {{"{{seed}}", record.seed.has_value() ? absl::StrCat(*record.seed) : "none"},
                          {"{{request_index}}", absl::StrCat(record.index)}});
    }
    if (!reply.reasoning.empty()) message[reply.reasoning_field] = reply.reasoning;
    json choices = json::array();
    if (reply.fault != Fault::kEmptyChoices) {
      choices.push_back({{"index", 0},
                         {"message", message},
                         {"finish_reason", reply.fault == Fault::kNoContent ? "length" : "stop"}});
    }
    std::string body = json{
        {"id", absl::StrCat("chatcmpl-double-", record.index)},
        {"object", "chat.completion"},
        {"model", record.model},
        {"choices", choices},
        {"usage", usage}}.dump();
    if (reply.fault == Fault::kTruncatedJson) body.resize(body.size() / 2);
    return JsonResponse(200, std::move(body));
  }

  std::string RequestsJson() const {
    json out = json::array();
    for (const RecordedRequest& r : Requests()) {
      out.push_back({{"index", r.index},
                     {"method", r.method},
                     {"target", r.target},
                     {"headers", r.headers},
                     {"model", r.model},
                     {"system", r.system},
                     {"user", r.user},
                     {"seed", r.seed.has_value() ? json(*r.seed) : json(nullptr)},
                     {"received_unix_micros", absl::ToUnixMicros(r.received)}});
    }
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  const absl::Duration idle_close_;
  std::unique_ptr<asio::ssl::context> tls_;
  std::optional<TlsIdentity> tls_identity_;
  mutable absl::Mutex mu_;
  DoubleScript script_ ABSL_GUARDED_BY(mu_);
  std::vector<int> uses_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> seen_bodies_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int max_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int connections_accepted_ ABSL_GUARDED_BY(mu_) = 0;
  int connections_open_ ABSL_GUARDED_BY(mu_) = 0;
  // Last, so that the connection coroutines still suspended in io_ are destroyed while the state they touch
  // (mu_, the counters, the TLS context) is alive.
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::vector<std::thread> threads_;
};

namespace {

// Polls `condition` every 2 ms until it holds; false if `timeout` passes first.
bool PollUntil(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LlmDouble>> LlmDouble::Start(DoubleScript script, Options options) {
  bool tls = options.tls.has_value();
  auto impl = std::make_unique<Impl>(std::move(script), std::move(options.tls), options.idle_close);
  if (absl::Status s = impl->LoadTls(); !s.ok()) return s;
  absl::StatusOr<int> port = impl->Listen(options.host, options.port);
  if (!port.ok()) return port.status();
  impl->Run(std::max(1, options.threads));
  return std::unique_ptr<LlmDouble>(new LlmDouble(std::move(impl), *port, tls));
}

LlmDouble::LlmDouble(std::unique_ptr<Impl> impl, int port, bool tls) : impl_(std::move(impl)), port_(port), tls_(tls) {}

LlmDouble::~LlmDouble() { impl_->Stop(); }

std::string LlmDouble::base_url() const { return absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", port_, "/v1"); }

v1::LlmEndpoint LlmDouble::Endpoint(const std::vector<std::string>& models, const std::string& name) const {
  v1::LlmEndpoint endpoint;
  endpoint.set_name(name);
  endpoint.set_base_url(base_url());
  for (const std::string& model : models) endpoint.add_models()->set_name(model);
  return endpoint;
}

void LlmDouble::SetScript(DoubleScript script) { impl_->SetScript(std::move(script)); }
std::vector<RecordedRequest> LlmDouble::Requests() const { return impl_->Requests(); }
int LlmDouble::request_count() const { return impl_->request_count(); }
int LlmDouble::max_in_flight() const { return impl_->max_in_flight(); }
int LlmDouble::connections_accepted() const { return impl_->connections_accepted(); }
int LlmDouble::connections_open() const { return impl_->connections_open(); }

bool LlmDouble::WaitForOpenConnectionsAtMost(int n, absl::Duration timeout) const {
  return PollUntil([&] { return connections_open() <= n; }, timeout);
}

bool LlmDouble::WaitForRequests(int n, absl::Duration timeout) const {
  return PollUntil([&] { return request_count() >= n; }, timeout);
}

}  // namespace accelopt::testing

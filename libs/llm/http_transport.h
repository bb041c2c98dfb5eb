// One HTTP/1.1 POST over TCP or TLS, directly or through a proxy, as an Asio coroutine (Boost.Beast).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/core/http_url.h"
#include "libs/llm/internal/asio_awaitable.h"
#include "libs/llm/proxy.h"

namespace accelopt::llm {

struct HttpPost {
  core::HttpUrl url;
  // Origin-form request target, e.g. "/v1/chat/completions".
  std::string target;
  // Extra headers (Content-Type, Host and Content-Length are set by the transport). May hold secrets:
  // never logged, never copied into errors.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Covers resolution, connect, proxy CONNECT, TLS handshake, write and read together.
  absl::Duration timeout = absl::Seconds(300);
};

struct HttpResponse {
  int status = 0;
  // The Retry-After header, empty when absent.
  std::string retry_after;
  std::string body;
};

// Sends one request per connection (Connection: close). Stateless apart from its TLS context and proxy
// settings; thread-safe.
class HttpTransport {
 public:
  // Responses larger than this are refused.
  static constexpr size_t kMaxResponseBytes = 64 << 20;

  // `tls` (peer verification configured by the owner) must outlive the transport.
  HttpTransport(boost::asio::ssl::context& tls, ProxyConfig proxy) : tls_(tls), proxy_(std::move(proxy)) {}

  // Any HTTP status is a successful exchange. Errors name the endpoint, never headers or userinfo:
  // DEADLINE_EXCEEDED when the timeout passes; UNAVAILABLE when resolution, connection, the proxy tunnel,
  // writing or reading fails; FAILED_PRECONDITION when the server's certificate does not verify (SNI and
  // host name or IP checks included).
  boost::asio::awaitable<absl::StatusOr<HttpResponse>> Post(const HttpPost& post) const;

 private:
  boost::asio::ssl::context& tls_;
  const ProxyConfig proxy_;
};

}  // namespace accelopt::llm

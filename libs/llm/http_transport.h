// HTTP/1.1 POSTs over TCP or TLS, directly or through a proxy, as Asio coroutines (Boost.Beast).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/core/http_url.h"
#include "libs/llm/connection_pool.h"
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
  // The request went over a kept-alive connection of an earlier request.
  bool reused_connection = false;
};

// Sends requests over kept-alive connections, pooled per origin (scheme://host:port), or one connection per
// request (Connection: close) when reuse is off. An idle connection the server has closed is never used; a
// request that cannot be written on a reused connection goes again on a fresh one, within the same timeout.
// Thread-safe.
class HttpTransport {
 public:
  // Responses larger than this are refused.
  static constexpr size_t kMaxResponseBytes = 64 << 20;
  // Idle connections kept per origin at most.
  static constexpr size_t kMaxIdlePerOrigin = 256;

  // `tls` (peer verification configured by the owner) must outlive the transport. Idle connections are kept
  // `idle_timeout` for reuse; a zero or negative duration turns reuse off.
  HttpTransport(boost::asio::ssl::context& tls, ProxyConfig proxy, absl::Duration idle_timeout)
      : tls_(tls),
        proxy_(std::move(proxy)),
        pool_(idle_timeout > absl::ZeroDuration() ? std::make_unique<ConnectionPool>(idle_timeout, kMaxIdlePerOrigin)
                                                  : nullptr) {}

  // Any HTTP status is a successful exchange. Errors name the endpoint, never headers or userinfo:
  // DEADLINE_EXCEEDED when the timeout passes; UNAVAILABLE when resolution, connection, the proxy tunnel,
  // writing or reading fails; FAILED_PRECONDITION when the server's certificate does not verify (SNI and
  // host name or IP checks included).
  boost::asio::awaitable<absl::StatusOr<HttpResponse>> Post(const HttpPost& post);
  // Closes the idle connections. Call before the io_context that ran the requests is destroyed.
  void CloseIdleConnections();

 private:
  // Resolves, connects, opens the proxy tunnel and completes the TLS handshake, all by `deadline`.
  boost::asio::awaitable<absl::StatusOr<std::unique_ptr<PooledConnection>>> Open(
      const HttpPost& post, std::chrono::steady_clock::time_point deadline) const;

  boost::asio::ssl::context& tls_;
  const ProxyConfig proxy_;
  const std::unique_ptr<ConnectionPool> pool_;
};

}  // namespace accelopt::llm

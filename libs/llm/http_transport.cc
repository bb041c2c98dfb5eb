#include "libs/llm/http_transport.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/str_cat.h"
#include "libs/llm/http_response.h"

namespace accelopt::llm {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;
using boost::system::error_code;
using Request = http::request<http::string_body>;

bool IsIpLiteral(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::string BasicCredentials(const std::string& userinfo) {
  std::string out(4 * ((userinfo.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(userinfo.data()), static_cast<int>(userinfo.size()));
  out.resize(n);
  return absl::StrCat("Basic ", out);
}

absl::Status IoError(const error_code& ec, absl::string_view what, const std::string& where, absl::Duration timeout) {
  if (ec == beast::error::timeout) {
    return absl::DeadlineExceededError(
        absl::StrCat("timed out after ", absl::FormatDuration(timeout), " (", what, " ", where, ")"));
  }
  return absl::UnavailableError(absl::StrCat(what, " ", where, ": ", ec.message()));
}

struct ExchangeResult {
  absl::StatusOr<HttpResponse> response;
  // Writing the request failed, and not by timing out: on a reused connection, the server had closed it while
  // idle, and the request can go again on a fresh one. (Once written, the server may have started on it: a
  // later failure is an attempt like any other.)
  bool not_sent = false;
  // The server keeps the connection open and nothing follows the response.
  bool reusable = false;
};

template <typename Stream>
asio::awaitable<ExchangeResult> Exchange(Stream& stream, const Request& request, const std::string& where,
                                         absl::Duration timeout) {
  ExchangeResult result;
  error_code ec;
  co_await http::async_write(stream, request, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    result.not_sent = ec != beast::error::timeout;
    result.response = IoError(ec, "sending request to", where, timeout);
    co_return result;
  }
  beast::flat_buffer buffer;
  HttpResponseParser parser;
  ConfigureResponseParser(parser);
  // The header alone first, so a Content-Length over the limit ends the read before any body is reserved
  // (Boost 1.74's eager parser would go on into the body; see ParseHttpResponse).
  co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    result.response = IoError(ec, "reading response from", where, timeout);
    co_return result;
  }
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    result.response = IoError(ec, "reading response from", where, timeout);
    co_return result;
  }
  result.reusable = parser.keep_alive() && buffer.size() == 0;
  result.response = ToHttpResponse(parser.release());
  co_return result;
}

// Opens a CONNECT tunnel to `target` through the proxy `stream` is connected to.
asio::awaitable<absl::Status> OpenTunnel(beast::tcp_stream& stream, const core::HttpUrl& proxy,
                                         const core::HttpUrl& target, absl::Duration timeout) {
  http::request<http::empty_body> connect{http::verb::connect, target.HostPort(), 11};
  connect.set(http::field::host, target.HostPort());
  if (!proxy.userinfo.empty()) connect.set(http::field::proxy_authorization, BasicCredentials(proxy.userinfo));
  error_code ec;
  const std::string where = absl::StrCat("proxy ", proxy.HostPort());
  co_await http::async_write(stream, connect, asio::redirect_error(use_awaitable, ec));
  if (ec) co_return IoError(ec, "sending CONNECT to", where, timeout);
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);  // a CONNECT answer has no body; the tunnel starts after the header
  co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
  if (ec) co_return IoError(ec, "reading CONNECT answer from", where, timeout);
  if (parser.get().result() != http::status::ok) {
    co_return absl::UnavailableError(
        absl::StrCat(where, " refused CONNECT to ", target.HostPort(), ": HTTP ", parser.get().result_int()));
  }
  co_return absl::OkStatus();
}

}  // namespace

asio::awaitable<absl::StatusOr<std::unique_ptr<PooledConnection>>> HttpTransport::Open(
    const HttpPost& post, std::chrono::steady_clock::time_point deadline) const {
  auto executor = co_await asio::this_coro::executor;
  const std::optional<core::HttpUrl> proxy = proxy_.ProxyFor(post.url);
  const core::HttpUrl& hop = proxy.has_value() ? *proxy : post.url;
  const std::string where = post.url.Redacted();

  auto tcp = std::make_unique<beast::tcp_stream>(executor);
  tcp->expires_at(deadline);
  error_code ec;
  asio::ip::tcp::resolver resolver(executor);
  auto endpoints =
      co_await resolver.async_resolve(hop.host, std::to_string(hop.port), asio::redirect_error(use_awaitable, ec));
  if (ec) co_return absl::UnavailableError(absl::StrCat("cannot resolve ", hop.host, ": ", ec.message()));
  co_await tcp->async_connect(endpoints, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    co_return IoError(ec, "connecting to", proxy.has_value() ? absl::StrCat("proxy ", hop.HostPort()) : where,
                      post.timeout);
  }
  auto connection = std::make_unique<PooledConnection>();
  if (!post.url.https()) {
    connection->plain = std::move(tcp);
    co_return connection;
  }
  if (proxy.has_value()) {
    absl::Status tunnel = co_await OpenTunnel(*tcp, *proxy, post.url, post.timeout);
    if (!tunnel.ok()) co_return tunnel;
  }
  connection->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*tcp), tls_);
  SSL* ssl = connection->tls->native_handle();
  if (IsIpLiteral(post.url.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), post.url.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, post.url.host.c_str());
    SSL_set1_host(ssl, post.url.host.c_str());
  }
  co_await connection->tls->async_handshake(asio::ssl::stream_base::client, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      co_return absl::FailedPreconditionError(absl::StrCat(
          "TLS certificate of ", post.url.HostPort(), " does not verify: ", X509_verify_cert_error_string(verify)));
    }
    co_return IoError(ec, "TLS handshake with", where, post.timeout);
  }
  co_return connection;
}

asio::awaitable<absl::StatusOr<HttpResponse>> HttpTransport::Post(const HttpPost& post) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(post.timeout);
  const std::optional<core::HttpUrl> proxy = proxy_.ProxyFor(post.url);
  const std::string where = post.url.Redacted();
  const std::string origin = absl::StrCat(post.url.scheme, "://", post.url.HostPort());

  Request request{http::verb::post, post.target, 11};
  request.set(http::field::host, post.url.HostPort());
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json");
  request.set(http::field::user_agent, "accelopt-llm/1");
  for (const auto& [name, value] : post.headers) request.set(name, value);
  request.keep_alive(pool_ != nullptr);
  request.body() = post.body;
  request.prepare_payload();
  if (!post.url.https() && proxy.has_value()) {
    request.target(absl::StrCat("http://", post.url.HostPort(), post.target));
    if (!proxy->userinfo.empty()) request.set(http::field::proxy_authorization, BasicCredentials(proxy->userinfo));
  }

  for (;;) {
    std::unique_ptr<PooledConnection> connection = pool_ != nullptr ? pool_->Take(origin) : nullptr;
    const bool reused = connection != nullptr;
    if (!reused) {
      absl::StatusOr<std::unique_ptr<PooledConnection>> opened = co_await Open(post, deadline);
      if (!opened.ok()) co_return opened.status();
      connection = *std::move(opened);
    }
    connection->tcp().expires_at(deadline);
    // (Two statements, not a conditional expression: GCC 12 destroys a co_await result inside ?: twice.)
    ExchangeResult result;
    if (connection->tls != nullptr) {
      result = co_await Exchange(*connection->tls, request, where, post.timeout);
    } else {
      result = co_await Exchange(*connection->plain, request, where, post.timeout);
    }
    if (!result.response.ok()) {
      // The server closed the idle connection before the request went out: send it on a new one.
      if (reused && result.not_sent) continue;
      co_return result.response;
    }
    result.response->reused_connection = reused;
    if (result.reusable && pool_ != nullptr) {
      connection->tcp().expires_never();
      pool_->Put(origin, std::move(connection));
    }
    co_return result.response;
  }
}

void HttpTransport::CloseIdleConnections() {
  if (pool_ != nullptr) pool_->Clear();
}

}  // namespace accelopt::llm

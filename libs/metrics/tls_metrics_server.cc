#include "libs/metrics/tls_metrics_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"

namespace accelopt::metrics {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kSessionTimeout = std::chrono::seconds(10);
constexpr size_t kMaxRequestBytes = 16 << 10;

// What identifies the loaded files: their modification times and sizes.
std::string Stamp(const v1::TlsConfig& tls) {
  std::string stamp;
  for (const std::string& path : {tls.cert_file(), tls.key_file()}) {
    std::error_code ec;
    auto mtime = std::filesystem::last_write_time(path, ec);
    auto size = std::filesystem::file_size(path, ec);
    absl::StrAppend(&stamp, path, ":", ec ? -1 : mtime.time_since_epoch().count(), ":", ec ? 0 : size, ";");
  }
  return stamp;
}

absl::StatusOr<std::shared_ptr<asio::ssl::context>> LoadContext(const v1::TlsConfig& tls) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  context->use_certificate_chain_file(tls.cert_file(), ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("server.tls.cert_file: cannot load '", tls.cert_file(), "': ", ec.message()));
  }
  context->use_private_key_file(tls.key_file(), asio::ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("server.tls.key_file: cannot load '", tls.key_file(), "': ", ec.message()));
  }
  return context;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsMetricsServer>> TlsMetricsServer::Start(const std::string& address,
                                                                          const v1::TlsConfig& tls) {
  absl::StatusOr<std::shared_ptr<asio::ssl::context>> context = LoadContext(tls);
  if (!context.ok()) return context.status();
  std::unique_ptr<TlsMetricsServer> server(new TlsMetricsServer(tls, *std::move(context)));
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = colon == std::string::npos ? "0" : address.substr(colon + 1);
  boost::system::error_code ec;
  tcp::resolver resolver(server->io_);
  auto endpoints = resolver.resolve(host, port, tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address, ": ", ec.message()));
  }
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  server->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) server->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) server->acceptor_.bind(endpoint, ec);
  if (!ec) server->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address, ": ", ec.message()));
  server->port_ = server->acceptor_.local_endpoint().port();
  asio::co_spawn(server->io_, server->AcceptLoop(), asio::detached);
  server->thread_ = std::thread([s = server.get()] { s->io_.run(); });
  return server;
}

TlsMetricsServer::TlsMetricsServer(v1::TlsConfig tls, std::shared_ptr<asio::ssl::context> context)
    : tls_(std::move(tls)),
      refresh_(absl::Seconds(tls_.refresh_seconds() > 0 ? tls_.refresh_seconds() : 60)),
      acceptor_(io_),
      context_(std::move(context)),
      loaded_stamp_(Stamp(tls_)),
      next_check_(absl::Now() + refresh_) {}

TlsMetricsServer::~TlsMetricsServer() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void TlsMetricsServer::AddCollectable(std::shared_ptr<prometheus::Collectable> collectable) {
  absl::MutexLock lock(&mu_);
  collectables_.push_back(std::move(collectable));
}

std::shared_ptr<asio::ssl::context> TlsMetricsServer::Context() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (now < next_check_) return context_;
  next_check_ = now + refresh_;
  std::string stamp = Stamp(tls_);
  if (stamp == loaded_stamp_) return context_;
  // A half-written pair (cert-manager replaces both files) fails to load: keep serving the last good one.
  if (absl::StatusOr<std::shared_ptr<asio::ssl::context>> reloaded = LoadContext(tls_); reloaded.ok()) {
    context_ = *std::move(reloaded);
    loaded_stamp_ = std::move(stamp);
  }
  return context_;
}

std::string TlsMetricsServer::Page() {
  std::vector<prometheus::MetricFamily> families;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& collectable : collectables_) {
      std::vector<prometheus::MetricFamily> more = collectable->Collect();
      families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
  }
  return prometheus::TextSerializer().Serialize(families);
}

asio::awaitable<void> TlsMetricsServer::AcceptLoop() {
  for (;;) {
    boost::system::error_code error;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted) co_return;
    if (!error) asio::co_spawn(io_, Session(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> TlsMetricsServer::Session(tcp::socket socket) {
  // Held for the whole session: a reload may replace the server's context meanwhile.
  const std::shared_ptr<asio::ssl::context> context = Context();
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *context);
  beast::get_lowest_layer(stream).expires_after(kSessionTimeout);
  boost::system::error_code error;
  co_await stream.async_handshake(asio::ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, error));
  if (error) co_return;
  beast::flat_buffer buffer(kMaxRequestBytes);
  http::request_parser<http::empty_body> parser;
  parser.header_limit(kMaxRequestBytes);
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, error));
  if (error) co_return;
  const auto& request = parser.get();
  http::response<http::string_body> response;
  response.version(request.version());
  response.keep_alive(false);
  const std::string target(request.target());
  if (request.method() == http::verb::get && target.substr(0, target.find('?')) == "/metrics") {
    response.result(http::status::ok);
    response.set(http::field::content_type, "text/plain; version=0.0.4");
    response.body() = Page();
  } else {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain");
    response.body() = "not found: the metrics are at /metrics\n";
  }
  response.prepare_payload();
  co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, error));
  if (!error) co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, error));
}

}  // namespace accelopt::metrics

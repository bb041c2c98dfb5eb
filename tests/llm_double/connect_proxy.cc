#include "tests/llm_double/connect_proxy.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace accelopt::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;
using boost::system::error_code;
using tcp = asio::ip::tcp;

class ConnectProxy::Impl {
 public:
  explicit Impl(int upstream_port) : upstream_port_(upstream_port) {}

  absl::StatusOr<int> Listen() {
    error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("proxy: cannot listen: ", ec.message()));
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, Accept(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
    return port_;
  }

  void Stop() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  std::vector<std::string> Tunnels() const {
    absl::MutexLock lock(&mu_);
    return tunnels_;
  }

 private:
  asio::awaitable<void> Accept() {
    for (;;) {
      error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(io_, Tunnel(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> Tunnel(tcp::socket client) {
    error_code ec;
    beast::flat_buffer buffer;
    http::request_parser<http::empty_body> parser;
    co_await http::async_read_header(client, buffer, parser, asio::redirect_error(use_awaitable, ec));
    if (ec || parser.get().method() != http::verb::connect) co_return;
    {
      absl::MutexLock lock(&mu_);
      tunnels_.push_back(std::string(parser.get().target()));
    }
    auto upstream = std::make_shared<tcp::socket>(io_);
    co_await upstream->async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), upstream_port_),
                                     asio::redirect_error(use_awaitable, ec));
    const char* answer = ec ? "HTTP/1.1 502 Bad Gateway\r\n\r\n" : "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(client, asio::buffer(std::string(answer)), asio::redirect_error(use_awaitable, ec));
    if (ec) co_return;
    auto down = std::make_shared<tcp::socket>(std::move(client));
    if (buffer.size() > 0) {
      co_await asio::async_write(*upstream, buffer.data(), asio::redirect_error(use_awaitable, ec));
    }
    asio::co_spawn(io_, Pipe(down, upstream), asio::detached);
    co_await Pipe(upstream, down);
  }

  static asio::awaitable<void> Pipe(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
    char data[16384];
    for (;;) {
      error_code ec;
      size_t n = co_await from->async_read_some(asio::buffer(data), asio::redirect_error(use_awaitable, ec));
      if (ec) break;
      co_await asio::async_write(*to, asio::buffer(data, n), asio::redirect_error(use_awaitable, ec));
      if (ec) break;
    }
    error_code ignored;
    to->shutdown(tcp::socket::shutdown_send, ignored);
  }

  const int upstream_port_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
  int port_ = 0;
  mutable absl::Mutex mu_;
  std::vector<std::string> tunnels_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<ConnectProxy>> ConnectProxy::Start(int upstream_port) {
  auto impl = std::make_unique<Impl>(upstream_port);
  absl::StatusOr<int> port = impl->Listen();
  if (!port.ok()) return port.status();
  return std::unique_ptr<ConnectProxy>(new ConnectProxy(std::move(impl)));
}

ConnectProxy::ConnectProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ConnectProxy::~ConnectProxy() { impl_->Stop(); }
int ConnectProxy::port() const { return impl_->port(); }
std::vector<std::string> ConnectProxy::Tunnels() const { return impl_->Tunnels(); }

}  // namespace accelopt::testing

// /metrics over HTTPS (Boost.Beast): what the admin listener serves when the service has server.tls, so
// scrapes cross the network encrypted like every other listener. The certificate and key files are re-read
// when they change (cert-manager rotation), checked at most every tls.refresh_seconds. Scrapers are not asked
// for a client certificate: the page holds bounded, non-secret counters.
#pragma once

// clang-format off
// First: Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>
// clang-format on

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "accelopt/v1/config.pb.h"
#include "prometheus/collectable.h"

namespace accelopt::metrics {

class TlsMetricsServer {
 public:
  // Binds `address` (host:port, port 0 picks one) and serves GET /metrics with the text exposition of every
  // collectable. INVALID_ARGUMENT naming server.tls.cert_file / key_file when they do not load; UNAVAILABLE
  // when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<TlsMetricsServer>> Start(const std::string& address, const v1::TlsConfig& tls);
  // Stops accepting and joins the io thread.
  ~TlsMetricsServer();

  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);
  int port() const { return port_; }

 private:
  TlsMetricsServer(v1::TlsConfig tls, std::shared_ptr<boost::asio::ssl::context> context);
  boost::asio::awaitable<void> AcceptLoop();
  // One scrape: TLS handshake, one request, one response, close (10 s in all at most).
  boost::asio::awaitable<void> Session(boost::asio::ip::tcp::socket socket);
  // The TLS context, rebuilt when the files changed since the last check.
  std::shared_ptr<boost::asio::ssl::context> Context();
  std::string Page();

  const v1::TlsConfig tls_;
  // How often the certificate files are checked for rotation (tls.refresh_seconds, default 60).
  const absl::Duration refresh_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  absl::Mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> context_ ABSL_GUARDED_BY(mu_);
  std::string loaded_stamp_ ABSL_GUARDED_BY(mu_);
  absl::Time next_check_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace accelopt::metrics

// The process's Prometheus registry and the /metrics HTTP endpoint on the admin address.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/config.pb.h"
#include "libs/metrics/tls_metrics_server.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace accelopt::metrics {

// Serves `registry` at http://<address>/metrics until destroyed, or at https:// when given TLS material.
class MetricsExposer {
 public:
  // `address` is host:port (port 0 picks a free port). With `tls` holding a cert_file and key_file, serves
  // HTTPS (TlsMetricsServer). UNAVAILABLE with one clear line when the address cannot be bound;
  // INVALID_ARGUMENT naming the file when the TLS material does not load.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(const std::string& address,
                                                               std::shared_ptr<prometheus::Registry> registry,
                                                               const v1::TlsConfig* tls = nullptr);

  // host:port actually bound.
  const std::string& address() const { return address_; }

  // Also serves `collectable` (kept alive as long as this exposer).
  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);

 private:
  MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer, std::unique_ptr<TlsMetricsServer> tls_server,
                 std::string address)
      : exposer_(std::move(exposer)), tls_server_(std::move(tls_server)), address_(std::move(address)) {}

  // Exactly one is set.
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<TlsMetricsServer> tls_server_;
  std::string address_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
};

}  // namespace accelopt::metrics

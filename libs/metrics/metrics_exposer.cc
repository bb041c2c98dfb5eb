#include "libs/metrics/metrics_exposer.h"

#include <exception>

#include "absl/strings/str_cat.h"

namespace accelopt::metrics {

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(const std::string& address,
                                                                      std::shared_ptr<prometheus::Registry> registry,
                                                                      const v1::TlsConfig* tls) {
  const std::string host = address.substr(0, address.rfind(':'));
  if (tls != nullptr && !tls->cert_file().empty() && !tls->key_file().empty()) {
    absl::StatusOr<std::unique_ptr<TlsMetricsServer>> server = TlsMetricsServer::Start(address, *tls);
    if (!server.ok()) return server.status();
    (*server)->AddCollectable(registry);
    std::string bound = absl::StrCat(host, ":", (*server)->port());
    return std::unique_ptr<MetricsExposer>(new MetricsExposer(nullptr, *std::move(server), std::move(bound)));
  }
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": address already in use or not local"));
  }
  exposer->RegisterCollectable(registry);
  std::vector<int> ports = exposer->GetListeningPorts();
  std::string bound = absl::StrCat(host, ":", ports.empty() ? 0 : ports.front());
  return std::unique_ptr<MetricsExposer>(new MetricsExposer(std::move(exposer), nullptr, bound));
}

void MetricsExposer::AddCollectable(std::shared_ptr<prometheus::Collectable> collectable) {
  if (tls_server_ != nullptr) {
    tls_server_->AddCollectable(collectable);
  } else {
    exposer_->RegisterCollectable(collectable);
  }
  collectables_.push_back(std::move(collectable));
}

}  // namespace accelopt::metrics

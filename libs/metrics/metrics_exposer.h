// The process's Prometheus registry and the /metrics HTTP endpoint on the admin address.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace accelopt::metrics {

// Serves `registry` at http://<address>/metrics until destroyed.
class MetricsExposer {
 public:
  // `address` is host:port (port 0 picks a free port). UNAVAILABLE with one clear line when the address
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(const std::string& address,
                                                               std::shared_ptr<prometheus::Registry> registry);

  // host:port actually bound.
  const std::string& address() const { return address_; }

  // Also serves `collectable` (kept alive as long as this exposer).
  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);

 private:
  MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer, std::string address)
      : exposer_(std::move(exposer)), address_(std::move(address)) {}

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string address_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
};

}  // namespace accelopt::metrics

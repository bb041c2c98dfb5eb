// A cluster of the five services as local processes on loopback: `accelopt up`, `down` and `status`.
#pragma once

#include <iosfwd>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::cli {

// The gRPC address of `service` ("orchestrator", "memory", ...): `server` when given; else the address
// recorded for it in <data_dir>/cluster.json when a local cluster is recorded there; else `fallback`.
// DATA_LOSS when cluster.json exists but does not parse.
absl::StatusOr<std::string> ClusterServiceAddress(const std::string& server, const std::string& data_dir,
                                                  const std::string& service, const std::string& fallback);

// Fills empty fields of a cluster config with defaults; `bin_dir` defaults to `default_bin_dir`.
void ApplyClusterDefaults(v1::ClusterConfig* config, const std::string& default_bin_dir);

// Starts every service of the cluster that is not already running, waits until each is SERVING, records
// them in <data_dir>/cluster.json and prints where each listens. Services already running are left alone,
// so a second `up` never starts a second cluster over the first. On failure, stops what this call started
// and returns the error naming the service and its log.
// `secure` first creates (or reuses) the CA, certificates and tokens of secure_cluster.h and starts every
// service with TLS, mutual TLS inside and authentication. A data dir of a secure cluster refuses a plain `up`.
absl::Status Up(const v1::ClusterConfig& config, std::ostream& out, bool secure = false);

// Stops every recorded service with SIGTERM (SIGKILL after the drain deadline) and forgets them.
absl::Status Down(const std::string& data_dir, std::ostream& out);

// Prints each service's state, address, metrics address, version and pid. FAILED_PRECONDITION when a
// service is not SERVING (crashed services are reported as such), NOT_FOUND when no cluster is recorded.
// `json` prints {"data_dir", "secure", "services": [{"name", "address", "metrics_address", "state", "version",
// "pid"}]} instead of the table.
absl::Status Status(const std::string& data_dir, std::ostream& out, bool json = false);

}  // namespace accelopt::cli

// The standard life of a service binary after its config is loaded: logging set-up, start, wait for
// SIGTERM/SIGINT, drain, exit code.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"
#include "google/protobuf/message.h"
#include "prometheus/registry.h"

namespace grpc {
class Service;
}

namespace accelopt::rpc {

// Prints "<binary>: error: <message>" as one line on stderr and returns exit code 1.
int FailStartup(const std::string& binary, const absl::Status& status);

// Whether the service can work; an error says why not.
using ServingCheck = std::function<absl::Status()>;

// Logs the effective config, starts the server with `services`, waits for a shutdown signal and drains.
// When `serving_check` is given it is the server's readiness check (ServerRunner::SetReadinessCheck): health
// is NOT_SERVING while it fails (each change logged); `liveness` stays SERVING. Returns the process exit code (0 after
// a clean shutdown, 1 when the server cannot start).
int RunServer(const std::string& service_name, const google::protobuf::Message& config, const v1::ServerConfig& server,
              std::shared_ptr<prometheus::Registry> registry, const std::vector<grpc::Service*>& services,
              ServingCheck serving_check = nullptr);

}  // namespace accelopt::rpc

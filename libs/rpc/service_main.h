// The standard life of a service binary after its config is loaded: logging set-up, start, wait for
// SIGTERM/SIGINT, drain, exit code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"
#include "google/protobuf/message.h"
#include "libs/rpc/info_service.h"
#include "prometheus/registry.h"

namespace grpc {
class Service;
}

namespace accelopt::rpc {

// Prints "<binary>: error: <message>" as one line on stderr and returns exit code 1.
int FailStartup(const std::string& binary, const absl::Status& status);

// Logs the effective config, starts the server with `services`, waits for a shutdown signal and drains.
// Agent services pass what they serve in `agent` (InfoService's model_providers and CheckModel).
// Returns the process exit code (0 after a clean shutdown, 1 when the server cannot start).
int RunServer(const std::string& service_name, const google::protobuf::Message& config, const v1::ServerConfig& server,
              std::shared_ptr<prometheus::Registry> registry, const std::vector<grpc::Service*>& services,
              const ServedModels& agent = {});

}  // namespace accelopt::rpc

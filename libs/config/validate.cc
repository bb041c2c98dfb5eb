#include "libs/config/validate.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/core/status_macros.h"

namespace accelopt::config {

void ApplyServerDefaults(v1::ServerConfig* server) {
  if (server->grpc_address().empty()) server->set_grpc_address("127.0.0.1:0");
  if (server->admin_address().empty()) server->set_admin_address("127.0.0.1:0");
  if (server->drain_seconds() == 0) server->set_drain_seconds(10);
  if (server->log_level().empty()) server->set_log_level("info");
  if (!server->has_reflection()) server->set_reflection(true);
  if (server->max_request_bytes() == 0) server->set_max_request_bytes(16 << 20);
}

absl::Status ValidateAddress(const std::string& address, const std::string& field) {
  auto colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", address, "' is not host:port with a port in 0..65535"));
  }
  return absl::OkStatus();
}

absl::Status ValidateServerConfig(const v1::ServerConfig& server) {
  ACCELOPT_RETURN_IF_ERROR(ValidateAddress(server.grpc_address(), "server.grpc_address"));
  ACCELOPT_RETURN_IF_ERROR(ValidateAddress(server.admin_address(), "server.admin_address"));
  if (server.drain_seconds() < 0) {
    return absl::InvalidArgumentError("server.drain_seconds: must not be negative");
  }
  const std::string& level = server.log_level();
  if (level != "debug" && level != "info" && level != "warning" && level != "error") {
    return absl::InvalidArgumentError(
        absl::StrCat("server.log_level: '", level, "' is not one of debug, info, warning, error"));
  }
  if (server.max_request_bytes() < 0) {
    return absl::InvalidArgumentError("server.max_request_bytes: must not be negative");
  }
  return absl::OkStatus();
}

}  // namespace accelopt::config

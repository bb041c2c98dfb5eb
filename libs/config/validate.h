// Defaults and start-up validation of the config parts every service shares.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::config {

// Fills empty fields with their documented defaults.
void ApplyServerDefaults(v1::ServerConfig* server);

// INVALID_ARGUMENT naming the field when an address is not host:port with a port in 0..65535, the drain
// time is negative, or the log level is unknown.
absl::Status ValidateServerConfig(const v1::ServerConfig& server);

// Checks one "host:port" value; `field` names it in the error.
absl::Status ValidateAddress(const std::string& address, const std::string& field);

}  // namespace accelopt::config

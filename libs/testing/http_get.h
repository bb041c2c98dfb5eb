// A minimal blocking HTTP/1.1 GET over loopback (Boost.Beast), for tests and probes.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace accelopt::testing {

// GETs http://<address><target>; returns the body of a 200 response. `address` is host:port.
absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& target, int timeout_ms = 5000);

}  // namespace accelopt::testing

// A minimal HTTP CONNECT proxy for tests: tunnels every CONNECT to one fixed upstream on loopback and records
// the authority each tunnel asked for.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accelopt::testing {

// Thread-safe. Whatever host a client names, the tunnel goes to 127.0.0.1:<upstream_port>, so tests can use
// names that do not resolve (the client must not resolve them itself when proxied).
class ConnectProxy {
 public:
  static absl::StatusOr<std::unique_ptr<ConnectProxy>> Start(int upstream_port);
  ~ConnectProxy();

  int port() const;
  // "host:port" of every CONNECT received, in order.
  std::vector<std::string> Tunnels() const;

  class Impl;

 private:
  explicit ConnectProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accelopt::testing

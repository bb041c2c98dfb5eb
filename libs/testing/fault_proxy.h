// An in-process TCP proxy for fault-injection tests: it listens on a free loopback port and forwards each
// connection to a backend, dropping a chosen fraction of them (the accepted socket is closed at once,
// which a gRPC client sees as UNAVAILABLE). The drops follow a seeded random sequence, so a run can be
// repeated. Thread-safe; one thread per open connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace accelopt::testing {

class FaultProxy {
 public:
  // Listens on 127.0.0.1 (a free port) and forwards to `backend` ("host:port", IPv4).
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(const std::string& backend, uint64_t seed);
  // Stops accepting and closes every open connection.
  ~FaultProxy();

  // "127.0.0.1:<port>", the address clients connect to.
  const std::string& address() const { return address_; }
  // From now on, each new connection is dropped with probability `fraction` (0 forwards all, 1 drops all).
  void SetDropFraction(double fraction);
  // Closes every connection open now (both sides), as a network blip would.
  void CutOpenConnections();

  int64_t accepted() const { return accepted_.load(); }
  int64_t dropped() const { return dropped_.load(); }

 private:
  FaultProxy(int listen_fd, std::string address, std::string backend_host, int backend_port, uint64_t seed);
  void AcceptLoop();
  void Pump(int client_fd);

  const int listen_fd_;
  const std::string address_;
  const std::string backend_host_;
  const int backend_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> accepted_{0};
  std::atomic<int64_t> dropped_{0};
  absl::Mutex mu_;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
  double drop_fraction_ ABSL_GUARDED_BY(mu_) = 0;
  // Both sockets of every open connection, for CutOpenConnections and shutdown.
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace accelopt::testing

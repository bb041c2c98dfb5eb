// Runs one service process: gRPC server (callback API) with health checking, reflection, RPC metrics and the
// InfoService, a Prometheus /metrics endpoint on the admin address, and graceful shutdown on SIGTERM/SIGINT.
//
//   accelopt::rpc::BlockShutdownSignals();           // first thing in main, before any thread starts
//   ServerRunner runner("planner", config.server(), registry);
//   runner.AddService(&planner_service);
//   if (auto s = runner.Start(); !s.ok()) { ...exit 1... }   // health turns SERVING here
//   runner.WaitForShutdownSignal();
//   runner.Shutdown();                                // NOT_SERVING, drain up to drain_seconds, stop
//
// Health (grpc.health.v1): the service "liveness" is SERVING while the process serves (Kubernetes liveness
// probe). The server-wide status "" and each registered service by its full name ("accelopt.v1.JobService",
// ...) report readiness: SERVING while the readiness check (if any) passes, NOT_SERVING otherwise and after
// Shutdown(). The standard process_* metrics and accelopt_build_info are served on /metrics.
#pragma once

#include <grpcpp/server.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "accelopt/v1/config.pb.h"
#include "libs/metrics/metrics_exposer.h"
#include "libs/rpc/info_service.h"
#include "prometheus/registry.h"

namespace accelopt::rpc {

// Blocks SIGTERM and SIGINT in the calling thread and every thread it creates later, so that
// WaitForShutdownSignal() receives them synchronously.
void BlockShutdownSignals();

class ServerRunner {
 public:
  ServerRunner(std::string service_name, v1::ServerConfig config, std::shared_ptr<prometheus::Registry> registry);
  ~ServerRunner();

  // Registers a service; call before Start(). Not owned.
  void AddService(grpc::Service* service);
  // What InfoService reports and checks for an agent service; call before Start().
  void SetServedModels(const ServedModels& models) { info_service_.set_served_models(models); }

  // Readiness: `check` runs every `period` from Start() on; while it returns an error, every named health
  // status but "liveness" is NOT_SERVING (the change is logged with the error). Call before Start().
  void SetReadinessCheck(std::function<absl::Status()> check, absl::Duration period = absl::Seconds(2));

  // Binds the admin (metrics) and gRPC addresses and starts serving; health reports SERVING for the
  // server and each registered service once this returns OK. UNAVAILABLE with one clear line naming the
  // address when it cannot be bound (e.g. already in use).
  absl::Status Start();

  // Health SERVING or NOT_SERVING for the server and every service (e.g. NOT_SERVING while the service
  // cannot make progress). No-op before Start() and after Shutdown(); not concurrently with Shutdown().

  // Blocks until SIGTERM or SIGINT arrives (requires BlockShutdownSignals()). Returns the signal.
  int WaitForShutdownSignal();

  // Health NOT_SERVING, stop accepting, let in-flight RPCs finish until the drain deadline, then cancel
  // the rest. Idempotent.
  void Shutdown();

  const std::string& grpc_address() const { return grpc_address_; }
  // Full names of the registered services (known after Start()).
  const std::vector<std::string>& service_names() const { return service_names_; }
  int grpc_port() const { return grpc_port_; }
  std::string metrics_address() const;

 private:
  std::string service_name_;
  v1::ServerConfig config_;
  std::shared_ptr<prometheus::Registry> registry_;
  void SetReadiness(bool ready);
  void ReadinessLoop();

  std::vector<grpc::Service*> services_;
  std::vector<std::string> service_names_;
  std::function<absl::Status()> readiness_check_;
  absl::Duration readiness_period_ = absl::Seconds(2);
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread readiness_thread_;
  InfoServiceImpl info_service_;
  std::unique_ptr<metrics::MetricsExposer> exposer_;
  std::unique_ptr<grpc::Server> server_;
  std::string grpc_address_;
  int grpc_port_ = 0;
  bool shut_down_ = false;
};

}  // namespace accelopt::rpc

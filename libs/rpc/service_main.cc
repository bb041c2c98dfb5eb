#include "libs/rpc/service_main.h"

#include <cstdio>

#include "libs/config/config_loader.h"
#include "libs/core/log.h"
#include "libs/rpc/server_runner.h"

namespace accelopt::rpc {

int FailStartup(const std::string& binary, const absl::Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", binary.c_str(), std::string(status.message()).c_str());
  return 1;
}

int RunServer(const std::string& service_name, const google::protobuf::Message& config, const v1::ServerConfig& server,
              std::shared_ptr<prometheus::Registry> registry, const std::vector<grpc::Service*>& services,
              ServeOptions options) {
  core::SetLogService(service_name);
  (void)core::SetLogLevelFromString(server.log_level());  // validated at load
  core::RouteGrpcLogs();
  ACCELOPT_LOG(INFO).With("config", config::ToJson(config)) << "effective config";
  ServerRunner runner(service_name, server, std::move(registry));
  for (grpc::Service* service : services) runner.AddService(service);
  if (options.readiness) runner.SetReadinessCheck(std::move(options.readiness));
  runner.SetServedModels(options.models);
  if (absl::Status s = runner.Start(); !s.ok()) {
    return FailStartup("accelopt-" + service_name, s);
  }
  runner.WaitForShutdownSignal();
  runner.Shutdown();
  return 0;
}

}  // namespace accelopt::rpc

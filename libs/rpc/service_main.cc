#include "libs/rpc/service_main.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "libs/config/config_loader.h"
#include "libs/core/log.h"
#include "libs/rpc/server_runner.h"

namespace accelopt::rpc {

int FailStartup(const std::string& binary, const absl::Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", binary.c_str(), std::string(status.message()).c_str());
  return 1;
}

namespace {

// Runs `check` every second on its own thread and sets the runner's health from it, until destroyed.
class ServingWatch {
 public:
  ServingWatch(ServerRunner* runner, ServingCheck check) : runner_(runner), check_(std::move(check)) {
    if (check_) thread_ = std::thread([this] { Run(); });
  }
  ~ServingWatch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    bool serving = true;
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
      const absl::Status status = check_();
      if (status.ok() == serving) continue;
      serving = status.ok();
      runner_->SetServing(serving);
      if (serving) {
        ACCELOPT_LOG(INFO) << "health SERVING again";
      } else {
        ACCELOPT_LOG(ERROR) << "health NOT_SERVING: " << status.message();
      }
    }
  }

  ServerRunner* runner_;
  ServingCheck check_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

int RunServer(const std::string& service_name, const google::protobuf::Message& config, const v1::ServerConfig& server,
              std::shared_ptr<prometheus::Registry> registry, const std::vector<grpc::Service*>& services,
              ServingCheck serving_check) {
  core::SetLogService(service_name);
  (void)core::SetLogLevelFromString(server.log_level());  // validated at load
  core::RouteGrpcLogs();
  ACCELOPT_LOG(INFO).With("config", config::ToJson(config)) << "effective config";
  ServerRunner runner(service_name, server, std::move(registry));
  for (grpc::Service* service : services) runner.AddService(service);
  if (absl::Status s = runner.Start(); !s.ok()) {
    return FailStartup("accelopt-" + service_name, s);
  }
  {
    ServingWatch watch(&runner, std::move(serving_check));
    runner.WaitForShutdownSignal();
  }
  runner.Shutdown();
  return 0;
}

}  // namespace accelopt::rpc

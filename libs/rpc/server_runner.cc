#include "libs/rpc/server_runner.h"

#include <arpa/inet.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/impl/server_initializer.h>
#include <grpcpp/server_builder.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.pb.h"
#include "libs/core/log.h"
#include "libs/core/version.h"
#include "libs/metrics/process_collector.h"
#include "libs/rpc/rpc_metrics.h"
#include "libs/rpc/tls_credentials.h"

namespace accelopt::rpc {
namespace {

// Why `address` (host:port) cannot be bound, from a probe bind; empty when it can.
std::string BindError(const std::string& address) {
  auto colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return "malformed address";
  }
  std::string host = address.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (host == "0.0.0.0" || host == "[::]" || host.empty()) {
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return "";  // not IPv4: no probe, let gRPC's own error stand
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::strerror(errno);
  std::string err;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) err = std::strerror(errno);
  close(fd);
  return err;
}

constexpr char kLiveness[] = "liveness";

// Captures the full names of the services registered on a server, once they are all registered.
class ServiceNamesPlugin final : public grpc::ServerBuilderPlugin {
 public:
  explicit ServiceNamesPlugin(std::vector<std::string>* out) : out_(out) {}
  std::string name() override { return "accelopt_service_names"; }
  void InitServer(grpc::ServerInitializer*) override {}
  void Finish(grpc::ServerInitializer* initializer) override { *out_ = *initializer->GetServiceList(); }
  void ChangeArguments(const std::string&, void*) override {}

 private:
  std::vector<std::string>* out_;
};

class ServiceNamesOption final : public grpc::ServerBuilderOption {
 public:
  explicit ServiceNamesOption(std::vector<std::string>* out) : out_(out) {}
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->push_back(std::make_unique<ServiceNamesPlugin>(out_));
  }

 private:
  std::vector<std::string>* out_;
};

}  // namespace

void BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ServerRunner::ServerRunner(std::string service_name, v1::ServerConfig config,
                           std::shared_ptr<prometheus::Registry> registry)
    : service_name_(std::move(service_name)),
      config_(std::move(config)),
      registry_(std::move(registry)),
      info_service_(service_name_) {}

ServerRunner::~ServerRunner() { Shutdown(); }

void ServerRunner::AddService(grpc::Service* service) { services_.push_back(service); }

void ServerRunner::SetReadinessCheck(std::function<absl::Status()> check, absl::Duration period) {
  readiness_check_ = std::move(check);
  readiness_period_ = period;
}

void ServerRunner::SetReadiness(bool ready) {
  auto* health = server_->GetHealthCheckService();
  health->SetServingStatus("", ready);
  for (const std::string& name : service_names_) health->SetServingStatus(name, ready);
  health->SetServingStatus(kLiveness, true);
}

void ServerRunner::ReadinessLoop() {
  bool ready = true;
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    mu_.Unlock();
    absl::Status status = readiness_check_();
    mu_.Lock();
    if (stopping_) break;
    if (status.ok() != ready) {
      ready = status.ok();
      SetReadiness(ready);
      if (ready) {
        ACCELOPT_LOG(INFO) << service_name_ << " ready again";
      } else {
        ACCELOPT_LOG(WARNING).With("error", status.ToString()) << service_name_ << " not ready";
      }
    }
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), readiness_period_);
  }
}

absl::Status ServerRunner::Start() {
  // Both listeners: gRPC and /metrics (served over HTTPS with the same material when server.tls is set).
  for (const auto& [field, address] :
       {std::pair<const char*, const std::string&>{"grpc_address", config_.grpc_address()},
        {"admin_address", config_.admin_address()}}) {
    if (HasTls(config_.tls()) || IsLoopbackAddress(address)) continue;
    if (!config_.insecure()) {
      return absl::FailedPreconditionError(
          absl::StrCat("server.", field, " ", address,
                       " is not loopback: configure server.tls (cert_file, key_file) or set server.insecure: true"));
    }
    ACCELOPT_LOG(WARNING).With(field, address)
        << "serving plaintext on a non-loopback address (server.insecure: true): anyone who reaches the port can "
           "read and forge this service's traffic";
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(config_);
  if (!credentials.ok()) return credentials.status();

  // With server.tls, /metrics is served over HTTPS with the same certificate (no client certificate asked).
  auto exposer = metrics::MetricsExposer::Start(config_.admin_address(), registry_, &config_.tls());
  if (!exposer.ok()) return exposer.status();
  exposer_ = std::move(*exposer);
  exposer_->AddCollectable(std::make_shared<metrics::ProcessCollector>(service_name_, core::kVersion));
  info_service_.set_metrics_address(exposer_->address());

  grpc::EnableDefaultHealthCheckService(true);
  if (config_.reflection()) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Without this, a second server could silently share the port via SO_REUSEPORT.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(config_.max_request_bytes());
  builder.SetOption(std::make_unique<ServiceNamesOption>(&service_names_));
  builder.AddListeningPort(config_.grpc_address(), *credentials, &grpc_port_);
  builder.RegisterService(&info_service_);
  for (grpc::Service* service : services_) builder.RegisterService(service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(MakeRpcMetricsInterceptorFactory(*registry_));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    server_.reset();
    std::string why = BindError(config_.grpc_address());
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config_.grpc_address(), ": ", why.empty() ? "gRPC could not bind it" : why));
  }
  grpc_address_ = absl::StrCat(config_.grpc_address().substr(0, config_.grpc_address().rfind(':')), ":", grpc_port_);
  // Reflection resolves grpc.health.v1 only when its generated descriptor is linked in; this keeps it linked.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  std::erase_if(service_names_, [](const std::string& name) { return name.rfind("grpc.reflection.", 0) == 0; });
  SetReadiness(true);
  if (readiness_check_) readiness_thread_ = std::thread([this] { ReadinessLoop(); });
  ACCELOPT_LOG(INFO).With("grpc_address", grpc_address_).With("metrics_address", exposer_->address())
      << service_name_ << " serving";
  return absl::OkStatus();
}

int ServerRunner::WaitForShutdownSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  ACCELOPT_LOG(INFO) << "received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", draining for up to "
                     << config_.drain_seconds() << " s";
  return sig;
}

void ServerRunner::Shutdown() {
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (readiness_thread_.joinable()) readiness_thread_.join();
  server_->GetHealthCheckService()->Shutdown();
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(config_.drain_seconds() * 1000));
  server_->Shutdown(deadline);
  server_->Wait();
  ACCELOPT_LOG(INFO) << service_name_ << " stopped";
}

std::string ServerRunner::metrics_address() const { return exposer_ ? exposer_->address() : std::string(); }

}  // namespace accelopt::rpc

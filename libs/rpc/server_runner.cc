#include "libs/rpc/server_runner.h"

#include <arpa/inet.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/core/log.h"
#include "libs/rpc/rpc_metrics.h"

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

absl::Status ServerRunner::Start() {
  auto exposer = metrics::MetricsExposer::Start(config_.admin_address(), registry_);
  if (!exposer.ok()) return exposer.status();
  exposer_ = std::move(*exposer);
  info_service_.set_metrics_address(exposer_->address());

  grpc::EnableDefaultHealthCheckService(true);
  if (config_.reflection()) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Without this, a second server could silently share the port via SO_REUSEPORT.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(config_.max_request_bytes());
  builder.AddListeningPort(config_.grpc_address(), grpc::InsecureServerCredentials(), &grpc_port_);
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
  server_->GetHealthCheckService()->Shutdown();
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(config_.drain_seconds() * 1000));
  server_->Shutdown(deadline);
  server_->Wait();
  ACCELOPT_LOG(INFO) << service_name_ << " stopped";
}

void ServerRunner::SetServing(bool serving) {
  if (shut_down_ || server_ == nullptr) return;
  server_->GetHealthCheckService()->SetServingStatus(serving);
}

std::string ServerRunner::metrics_address() const { return exposer_ ? exposer_->address() : std::string(); }

}  // namespace accelopt::rpc

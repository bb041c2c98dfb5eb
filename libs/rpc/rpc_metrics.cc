#include "libs/rpc/rpc_metrics.h"

#include <chrono>
#include <string>

#include "absl/strings/ascii.h"
#include "google/protobuf/descriptor.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"

namespace accelopt::rpc {
namespace {

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

struct RpcMetricFamilies {
  prometheus::Family<prometheus::Counter>& handled;
  prometheus::Family<prometheus::Histogram>& seconds;
};

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(RpcMetricFamilies* families, std::string service, std::string method)
      : families_(families),
        service_(std::move(service)),
        method_(std::move(method)),
        start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      code_ = methods->GetSendStatus().error_code();
    }
    methods->Proceed();
  }

  ~RpcMetricsInterceptor() override {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    families_->handled.Add({{"grpc_service", service_}, {"grpc_method", method_}, {"grpc_code", CodeName(code_)}})
        .Increment();
    families_->seconds
        .Add({{"grpc_service", service_}, {"grpc_method", method_}},
             prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600})
        .Observe(seconds);
  }

 private:
  RpcMetricFamilies* families_;
  std::string service_;
  std::string method_;
  std::chrono::steady_clock::time_point start_;
  // Stays CANCELLED when the call ends without the server sending a status.
  grpc::StatusCode code_ = grpc::StatusCode::CANCELLED;
};

class RpcMetricsInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcMetricsInterceptorFactory(prometheus::Registry& registry)
      : families_{prometheus::BuildCounter()
                      .Name("accelopt_rpc_server_handled_total")
                      .Help("RPCs completed by the server, by service, method and status code")
                      .Register(registry),
                  prometheus::BuildHistogram()
                      .Name("accelopt_rpc_server_handling_seconds")
                      .Help("Time from RPC start to completion, by service and method")
                      .Register(registry)} {}

  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    auto [service, method] = RpcMethodLabels(info->method() ? info->method() : "");
    return new RpcMetricsInterceptor(&families_, std::move(service), std::move(method));
  }

 private:
  RpcMetricFamilies families_;
};

}  // namespace

std::pair<std::string, std::string> RpcMethodLabels(absl::string_view path) {
  // "/accelopt.v1.JobService/SubmitJob" -> ("accelopt.v1.JobService", "SubmitJob").
  auto slash = path.rfind('/');
  if (path.size() < 2 || path[0] != '/' || slash == absl::string_view::npos || slash == 0)
    return {"unknown", "unknown"};
  std::string service(path.substr(1, slash - 1));
  std::string method(path.substr(slash + 1));
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const google::protobuf::ServiceDescriptor* descriptor = pool->FindServiceByName(service);
  if (descriptor == nullptr) return {"unknown", "unknown"};
  if (descriptor->FindMethodByName(method) == nullptr) return {service, "unknown"};
  return {service, method};
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeRpcMetricsInterceptorFactory(
    prometheus::Registry& registry) {
  return std::make_unique<RpcMetricsInterceptorFactory>(registry);
}

}  // namespace accelopt::rpc

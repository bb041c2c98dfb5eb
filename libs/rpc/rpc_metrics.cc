#include "libs/rpc/rpc_metrics.h"

#include <chrono>
#include <string>

#include "absl/strings/ascii.h"
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
    families_->handled.Add({{"service", service_}, {"method", method_}, {"code", CodeName(code_)}}).Increment();
    families_->seconds
        .Add({{"service", service_}, {"method", method_}},
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
    // "/accelopt.v1.JobService/SubmitJob" -> service "accelopt.v1.JobService", method "SubmitJob".
    std::string full = info->method() ? info->method() : "";
    auto slash = full.rfind('/');
    std::string service = slash == std::string::npos || slash == 0 ? "unknown" : full.substr(1, slash - 1);
    std::string method = slash == std::string::npos ? full : full.substr(slash + 1);
    return new RpcMetricsInterceptor(&families_, std::move(service), std::move(method));
  }

 private:
  RpcMetricFamilies families_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeRpcMetricsInterceptorFactory(
    prometheus::Registry& registry) {
  return std::make_unique<RpcMetricsInterceptorFactory>(registry);
}

}  // namespace accelopt::rpc

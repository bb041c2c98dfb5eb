// Uniform server-side RPC metrics, recorded by a gRPC interceptor for every method of every service:
//   accelopt_rpc_server_handled_total{grpc_service,grpc_method,grpc_code}
//   accelopt_rpc_server_handling_seconds{grpc_service,grpc_method}
// Label values are bounded by the compiled schema: a service or method that no linked .proto declares is
// recorded as "unknown", so callers cannot grow /metrics with made-up names. (`service` is left to the
// scraper: the Prometheus Operator sets it to the Kubernetes Service.)
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "prometheus/registry.h"

namespace accelopt::rpc {

// The (grpc_service, grpc_method) labels of the gRPC path "/package.Service/Method": the names when the
// generated descriptor pool declares them, else "unknown" for what is not declared.
std::pair<std::string, std::string> RpcMethodLabels(absl::string_view path);

// Creates the interceptor factory; metrics are registered in `registry` on construction.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeRpcMetricsInterceptorFactory(
    prometheus::Registry& registry);

}  // namespace accelopt::rpc

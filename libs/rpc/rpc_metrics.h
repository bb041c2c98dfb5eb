// Uniform server-side RPC metrics, recorded by a gRPC interceptor for every method of every service:
//   accelopt_rpc_server_handled_total{service,method,code}
//   accelopt_rpc_server_handling_seconds{service,method}
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "prometheus/registry.h"

namespace accelopt::rpc {

// Creates the interceptor factory; metrics are registered in `registry` on construction.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeRpcMetricsInterceptorFactory(
    prometheus::Registry& registry);

}  // namespace accelopt::rpc

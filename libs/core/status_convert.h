// Conversions between absl::Status and grpc::Status at the RPC boundary. Both code spaces mirror
// google.rpc.Code, so codes map one to one.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace accelopt::core {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace accelopt::core

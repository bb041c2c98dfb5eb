// gRPC adapter of the executor service: the executor agent, which turns a kernel and a plan into new kernel sources
#pragma once

#include "accelopt/v1/executor_service.grpc.pb.h"

namespace accelopt::executor {

// RPCs not overridden here answer UNIMPLEMENTED (see the README status table).
class ExecutorServiceImpl final : public v1::ExecutorService::CallbackService {};

}  // namespace accelopt::executor

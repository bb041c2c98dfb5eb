// gRPC adapter of the executor service: the executor agent, which turns a kernel and a plan into new kernel sources
#pragma once

#include "accelopt/v1/executor_service.grpc.pb.h"
#include "libs/security/call_authorizer.h"
#include "services/executor/executor.h"

namespace accelopt::executor {

// Translates ImplementRequest/ImplementResponse; validation, sampling and checks live in Executor. Never
// blocks a gRPC thread: invalid requests finish inline, valid ones from the sampling callbacks.
class ExecutorServiceImpl final : public v1::ExecutorService::CallbackService {
 public:
  // Only the orchestrator (role internal) may call when the authorizer is enabled; it must outlive the server.
  explicit ExecutorServiceImpl(Executor& executor, security::CallAuthorizer authorizer = {nullptr, nullptr})
      : executor_(executor), authorizer_(authorizer) {}

  grpc::ServerUnaryReactor* Implement(grpc::CallbackServerContext* context, const v1::ImplementRequest* request,
                                      v1::ImplementResponse* response) override;

 private:
  Executor& executor_;
  security::CallAuthorizer authorizer_;
};

}  // namespace accelopt::executor

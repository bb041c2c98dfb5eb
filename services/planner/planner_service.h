// gRPC adapter of the planner service: the planner agent, which turns a kernel and its profile into optimization plans
#pragma once

#include "accelopt/v1/planner_service.grpc.pb.h"
#include "libs/security/call_authorizer.h"
#include "services/planner/planner.h"

namespace accelopt::planner {

// Translates PlanRequest/PlanResponse; validation and sampling live in Planner. Never blocks a gRPC thread:
// invalid requests finish inline, valid ones finish from the sampling callbacks.
class PlannerServiceImpl final : public v1::PlannerService::CallbackService {
 public:
  // Only the orchestrator (role internal) may call when the authorizer is enabled; it must outlive the server.
  explicit PlannerServiceImpl(Planner& planner, security::CallAuthorizer authorizer = {nullptr, nullptr})
      : planner_(planner), authorizer_(authorizer) {}

  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* context, const v1::PlanRequest* request,
                                 v1::PlanResponse* response) override;

 private:
  Planner& planner_;
  security::CallAuthorizer authorizer_;
};

}  // namespace accelopt::planner

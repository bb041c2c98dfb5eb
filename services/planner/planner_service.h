// gRPC adapter of the planner service: the planner agent, which turns a kernel and its profile into optimization plans
#pragma once

#include "accelopt/v1/planner_service.grpc.pb.h"

namespace accelopt::planner {

// RPCs not overridden here answer UNIMPLEMENTED (see the README status table).
class PlannerServiceImpl final : public v1::PlannerService::CallbackService {};

}  // namespace accelopt::planner

#include "services/planner/planner_service.h"

#include "libs/core/status_convert.h"
#include "libs/llm/answer_by.h"

namespace accelopt::planner {

grpc::ServerUnaryReactor* PlannerServiceImpl::Plan(grpc::CallbackServerContext* context, const v1::PlanRequest* request,
                                                   v1::PlanResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s = authorizer_.RequireInternal(*context, "plan"); !s.ok()) {
    reactor->Finish(core::ToGrpcStatus(s));
    return reactor;
  }
  absl::StatusOr<llm::PlannerModel*> model = planner_.Validate(*request);
  if (!model.ok()) {
    reactor->Finish(core::ToGrpcStatus(model.status()));
    return reactor;
  }
  auto owned = *request;
  llm::FillAnswerBy(context->deadline(), absl::Now(), owned.mutable_answer_by());
  planner_.Plan(std::make_shared<const v1::PlanRequest>(std::move(owned)), **model,
                [reactor, response](v1::PlanResponse result) {
                  *response = std::move(result);
                  reactor->Finish(grpc::Status::OK);
                });
  return reactor;
}

}  // namespace accelopt::planner

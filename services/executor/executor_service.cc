#include "services/executor/executor_service.h"

#include "libs/core/status_convert.h"
#include "libs/llm/answer_by.h"

namespace accelopt::executor {

grpc::ServerUnaryReactor* ExecutorServiceImpl::Implement(grpc::CallbackServerContext* context,
                                                         const v1::ImplementRequest* request,
                                                         v1::ImplementResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s = authorizer_.RequireInternal(*context, "implement"); !s.ok()) {
    reactor->Finish(core::ToGrpcStatus(s));
    return reactor;
  }
  absl::StatusOr<llm::ExecutorModel*> model = executor_.Validate(*request);
  if (!model.ok()) {
    reactor->Finish(core::ToGrpcStatus(model.status()));
    return reactor;
  }
  auto owned = *request;
  llm::FillAnswerBy(context->deadline(), absl::Now(), owned.mutable_answer_by());
  executor_.Implement(std::make_shared<const v1::ImplementRequest>(std::move(owned)), **model,
                      [reactor, response](v1::ImplementResponse result) {
                        *response = std::move(result);
                        reactor->Finish(grpc::Status::OK);
                      });
  return reactor;
}

}  // namespace accelopt::executor

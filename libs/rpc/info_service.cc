#include "libs/rpc/info_service.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "libs/core/status_convert.h"
#include "libs/core/version.h"

namespace accelopt::rpc {

InfoServiceImpl::InfoServiceImpl(std::string service) {
  info_.set_service(std::move(service));
  info_.set_version(core::kVersion);
  info_.set_pid(getpid());
  *info_.mutable_started_at() = google::protobuf::util::TimeUtil::GetCurrentTime();
}

grpc::ServerUnaryReactor* InfoServiceImpl::GetInfo(grpc::CallbackServerContext* ctx, const v1::GetInfoRequest*,
                                                   v1::GetInfoResponse* resp) {
  *resp = info_;
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* InfoServiceImpl::CheckModel(grpc::CallbackServerContext* ctx,
                                                      const v1::CheckModelRequest* req, v1::CheckModelResponse*) {
  auto* reactor = ctx->DefaultReactor();
  if (!check_model_) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                                 absl::StrCat("the ", info_.service(), " service serves no agent models")));
  } else {
    reactor->Finish(core::ToGrpcStatus(check_model_(req->model())));
  }
  return reactor;
}

}  // namespace accelopt::rpc

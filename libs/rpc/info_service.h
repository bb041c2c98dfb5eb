// accelopt.v1.InfoService: the process's identity (service name, version, pid, start time, metrics address)
// and, for agent services, the model providers it serves.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/info_service.grpc.pb.h"

namespace accelopt::rpc {

class InfoServiceImpl final : public v1::InfoService::CallbackService {
 public:
  explicit InfoServiceImpl(std::string service);
  // Both setters are for start-up, before the server starts.
  void set_metrics_address(std::string address) { info_.set_metrics_address(std::move(address)); }
  void set_model_providers(const std::vector<std::string>& names) {
    info_.mutable_model_providers()->Assign(names.begin(), names.end());
  }

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* ctx, const v1::GetInfoRequest* req,
                                    v1::GetInfoResponse* resp) override;

 private:
  v1::GetInfoResponse info_;
};

}  // namespace accelopt::rpc

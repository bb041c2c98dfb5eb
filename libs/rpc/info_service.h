// accelopt.v1.InfoService: the process's identity (service name, version, pid, start time, metrics address)
// and, for agent services, the model providers it serves and the check of a model spec (CheckModel).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "accelopt/v1/info_service.grpc.pb.h"

namespace accelopt::rpc {

// What an agent service serves: its provider names (sorted) and the check of a model spec against them
// (ProviderRegistry::FindValid). Empty for the other services.
struct ServedModels {
  std::vector<std::string> providers;
  std::function<absl::Status(const v1::ModelSpec&)> check;
};

class InfoServiceImpl final : public v1::InfoService::CallbackService {
 public:
  explicit InfoServiceImpl(std::string service);
  // Both setters are for start-up, before the server starts.
  void set_metrics_address(std::string address) { info_.set_metrics_address(std::move(address)); }
  void set_served_models(const ServedModels& models) {
    info_.mutable_model_providers()->Assign(models.providers.begin(), models.providers.end());
    check_model_ = models.check;
  }

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* ctx, const v1::GetInfoRequest* req,
                                    v1::GetInfoResponse* resp) override;
  grpc::ServerUnaryReactor* CheckModel(grpc::CallbackServerContext* ctx, const v1::CheckModelRequest* req,
                                       v1::CheckModelResponse* resp) override;

 private:
  v1::GetInfoResponse info_;
  std::function<absl::Status(const v1::ModelSpec&)> check_model_;
};

}  // namespace accelopt::rpc

#include "services/profiler/profiler_service.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "libs/core/enum_name.h"
#include "libs/core/log.h"
#include "libs/core/sha256.h"
#include "libs/core/status_convert.h"
#include "services/profiler/backend_registry.h"

namespace accelopt::profiler {
namespace {

// A unary reactor that raises a flag when the client cancels, so the sandbox can be killed.
class ProfileReactor final : public grpc::ServerUnaryReactor {
 public:
  ProfileReactor() : cancelled_(std::make_shared<std::atomic<bool>>(false)) {}
  void OnCancel() override { cancelled_->store(true); }
  void OnDone() override { delete this; }
  std::shared_ptr<std::atomic<bool>> cancelled() const { return cancelled_; }

 private:
  std::shared_ptr<std::atomic<bool>> cancelled_;
};

}  // namespace

absl::Status ValidateProfileRequest(const v1::ProfileRequest& request, const DeviceBackend& backend) {
  const auto& source = request.kernel().source();
  if (source.empty()) return absl::InvalidArgumentError("kernel.source: must not be empty");
  if (source.size() > kMaxKernelBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel.source: ", source.size(), " bytes exceeds the limit of ", kMaxKernelBytes));
  }
  if (!request.kernel().sha256().empty() && request.kernel().sha256() != core::Sha256Hex(source)) {
    return absl::InvalidArgumentError("kernel.sha256: does not match the SHA-256 of kernel.source");
  }
  const auto& reference = request.problem().reference_source();
  if (reference.empty()) return absl::InvalidArgumentError("problem.reference_source: must not be empty");
  if (reference.size() > kMaxReferenceBytes) {
    return absl::InvalidArgumentError(absl::StrCat("problem.reference_source: ", reference.size(),
                                                   " bytes exceeds the limit of ", kMaxReferenceBytes));
  }
  const auto& name = request.problem().reference_filename();
  if (!name.empty() && (name.find('/') != std::string::npos || name == "kernel.py" || name.size() < 4 ||
                        name.substr(name.size() - 3) != ".py")) {
    return absl::InvalidArgumentError("problem.reference_filename: must be a plain *.py name other than kernel.py");
  }
  if (request.device() != v1::DEVICE_UNSPECIFIED && request.device() != backend.device()) {
    return absl::InvalidArgumentError(absl::StrCat("device: this worker serves ", backend.name(), ", not ",
                                                   BuiltinBackends().Name(request.device())));
  }
  if (request.options().seeds() < 0 || request.options().seeds() > 32) {
    return absl::InvalidArgumentError("options.seeds: must be from 0 (default 5) to 32");
  }
  if (!std::isfinite(request.options().timeout_seconds()) || request.options().timeout_seconds() < 0) {
    return absl::InvalidArgumentError("options.timeout_seconds: must be a number >= 0 (0: the worker's default)");
  }
  return absl::OkStatus();
}

ProfilerServiceImpl::ProfilerServiceImpl(const KernelProfiler* profiler, int slots, int queue_limit,
                                         ProfilerMetrics metrics, security::CallAuthorizer authorizer)
    : profiler_(profiler),
      authorizer_(authorizer),
      metrics_(metrics),
      pool_(slots, queue_limit, [this] { UpdateGauges(); }) {
  UpdateGauges();
}

grpc::ServerUnaryReactor* ProfilerServiceImpl::Profile(grpc::CallbackServerContext* ctx,
                                                       const v1::ProfileRequest* request,
                                                       v1::ProfileResponse* response) {
  auto* reactor = new ProfileReactor();
  if (absl::Status s = authorizer_.RequireInternal(*ctx, "profile"); !s.ok()) {
    reactor->Finish(core::ToGrpcStatus(s));
    return reactor;
  }
  if (absl::Status s = ValidateProfileRequest(*request, profiler_->backend()); !s.ok()) {
    reactor->Finish(core::ToGrpcStatus(s));
    return reactor;
  }
  auto cancelled = reactor->cancelled();
  absl::Status admitted = pool_.Submit([this, reactor, request, response, cancelled](int slot) {
    UpdateGauges();
    auto start = std::chrono::steady_clock::now();
    v1::ProfileResult result = cancelled->load() ? v1::ProfileResult()
                                                 : profiler_->Profile(request->kernel(), request->problem(),
                                                                      request->options(), slot, cancelled.get());
    metrics_.profile_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (cancelled->load()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "profile cancelled by the caller"));
    } else {
      Record(result);
      *response->mutable_result() = std::move(result);
      reactor->Finish(grpc::Status::OK);
    }
  });
  if (!admitted.ok()) {
    metrics_.rejected.Increment();
    reactor->Finish(core::ToGrpcStatus(admitted));
  }
  UpdateGauges();
  return reactor;
}

grpc::ServerUnaryReactor* ProfilerServiceImpl::GetWorkerStatus(grpc::CallbackServerContext* ctx,
                                                               const v1::GetWorkerStatusRequest*,
                                                               v1::WorkerStatus* response) {
  if (absl::Status s = authorizer_.RequireInternal(*ctx, "worker_status"); !s.ok()) {
    auto* reactor = ctx->DefaultReactor();
    reactor->Finish(core::ToGrpcStatus(s));
    return reactor;
  }
  SlotPool::Stats stats = pool_.stats();
  response->set_device(profiler_->backend().device());
  response->set_slots(stats.slots);
  response->set_busy_slots(stats.busy);
  response->set_queued(stats.queued);
  response->set_queue_limit(stats.queue_limit);
  response->set_backend_version(profiler_->backend().version());
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [verdict, n] : by_verdict_) (*response->mutable_profiles_by_verdict())[verdict] = n;
  }
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

void ProfilerServiceImpl::Record(const v1::ProfileResult& result) {
  std::string verdict = core::ShortEnumName(result.verdict());
  metrics_.profiles.Add({{"verdict", verdict}}).Increment();
  absl::MutexLock lock(&mu_);
  ++by_verdict_[verdict];
}

void ProfilerServiceImpl::UpdateGauges() {
  SlotPool::Stats stats = pool_.stats();
  metrics_.slots.Set(stats.slots);
  metrics_.slots_busy.Set(stats.busy);
  metrics_.queue_depth.Set(stats.queued);
}

}  // namespace accelopt::profiler

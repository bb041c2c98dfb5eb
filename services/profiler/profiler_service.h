// gRPC adapter of a profiler worker: validates requests, admits them into the slot pool (RESOURCE_EXHAUSTED
// when full), runs KernelProfiler on a slot, and kills the sandbox when the caller cancels.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "accelopt/v1/profiler_service.grpc.pb.h"
#include "libs/security/call_authorizer.h"
#include "services/profiler/kernel_profiler.h"
#include "services/profiler/profiler_metrics.h"
#include "services/profiler/slot_pool.h"

namespace accelopt::profiler {

// Largest kernel source and reference module accepted (bytes).
inline constexpr size_t kMaxKernelBytes = 256 << 10;
inline constexpr size_t kMaxReferenceBytes = 1 << 20;

class ProfilerServiceImpl final : public v1::ProfilerService::CallbackService {
 public:
  // Only the orchestrator (role internal) may call when the authorizer is enabled; it must outlive the server.
  ProfilerServiceImpl(const KernelProfiler* profiler, int slots, int queue_limit, ProfilerMetrics metrics,
                      security::CallAuthorizer authorizer = {nullptr, nullptr});

  grpc::ServerUnaryReactor* Profile(grpc::CallbackServerContext* ctx, const v1::ProfileRequest* request,
                                    v1::ProfileResponse* response) override;
  grpc::ServerUnaryReactor* GetWorkerStatus(grpc::CallbackServerContext* ctx, const v1::GetWorkerStatusRequest* request,
                                            v1::WorkerStatus* response) override;

 private:
  void Record(const v1::ProfileResult& result);
  void UpdateGauges();

  const KernelProfiler* profiler_;
  security::CallAuthorizer authorizer_;
  ProfilerMetrics metrics_;
  absl::Mutex mu_;
  std::map<std::string, int64_t> by_verdict_ ABSL_GUARDED_BY(mu_);
  // Last member: its destructor waits for running profiles, which use the members above.
  SlotPool pool_;
};

// INVALID_ARGUMENT naming the field when the request cannot be profiled by a worker of `backend`.
absl::Status ValidateProfileRequest(const v1::ProfileRequest& request, const DeviceBackend& backend);

}  // namespace accelopt::profiler

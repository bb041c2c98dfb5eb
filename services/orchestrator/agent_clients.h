// Small asynchronous client interfaces the job engine uses to reach the planner, executor and memory
// services. gRPC implementations live in grpc_clients.h; tests use in-process fakes (testing/).
#pragma once

#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "accelopt/v1/executor_service.pb.h"
#include "accelopt/v1/memory_service.pb.h"
#include "accelopt/v1/planner_service.pb.h"
#include "services/orchestrator/call_handle.h"

namespace accelopt::orchestrator {

template <typename T>
using Callback = absl::AnyInvocable<void(absl::StatusOr<T>) &&>;

// Every method starts the call and returns at once; `done` runs exactly once, on any thread (possibly
// inside the call for instant implementations). Errors are the RPC's status (UNAVAILABLE,
// DEADLINE_EXCEEDED after `deadline`, CANCELLED after CallHandle::Cancel, ...).
class PlannerClient {
 public:
  virtual ~PlannerClient() = default;
  virtual std::shared_ptr<CallHandle> Plan(v1::PlanRequest request, absl::Duration deadline,
                                           Callback<v1::PlanResponse> done) = 0;
};

class ExecutorClient {
 public:
  virtual ~ExecutorClient() = default;
  virtual std::shared_ptr<CallHandle> Implement(v1::ImplementRequest request, absl::Duration deadline,
                                                Callback<v1::ImplementResponse> done) = 0;
};

class MemoryClient {
 public:
  virtual ~MemoryClient() = default;
  virtual std::shared_ptr<CallHandle> QueryExperiences(v1::QueryExperiencesRequest request, absl::Duration deadline,
                                                       Callback<v1::QueryExperiencesResponse> done) = 0;
  virtual std::shared_ptr<CallHandle> SummarizeIteration(v1::SummarizeIterationRequest request, absl::Duration deadline,
                                                         Callback<v1::SummarizeIterationResponse> done) = 0;
};

}  // namespace accelopt::orchestrator

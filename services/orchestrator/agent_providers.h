// What the agent services report they serve: the model provider names of the planner, executor and memory
// (summarizer) services, read from their InfoService (GetInfoResponse.model_providers), and the check of a
// submitted job's models against them. The orchestrator keeps no provider list of its own.
#pragma once

#include <grpcpp/channel.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "accelopt/v1/info_service.grpc.pb.h"
#include "accelopt/v1/job.pb.h"

namespace accelopt::orchestrator {

// How long a submit waits for each agent service's report.
inline constexpr absl::Duration kProviderReportDeadline = absl::Seconds(2);

// Asks one agent service which providers it serves. Implementations are thread-safe.
class ProviderReporter {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<std::vector<std::string>>) &&>;
  virtual ~ProviderReporter() = default;
  // Starts the call and returns at once; `done` runs exactly once, on any thread (possibly inside the call).
  virtual void ReportProviders(absl::Duration deadline, Done done) = 0;
};

// ProviderReporter over the agent service's InfoService.
class GrpcProviderReporter final : public ProviderReporter {
 public:
  explicit GrpcProviderReporter(std::shared_ptr<grpc::Channel> channel)
      : stub_(v1::InfoService::NewStub(std::move(channel))) {}
  void ReportProviders(absl::Duration deadline, Done done) override;

 private:
  std::unique_ptr<v1::InfoService::Stub> stub_;
};

// The last known provider lists of the three agent roles. Thread-safe.
//
// Policy when an agent service is unreachable: each Refresh asks all three services with a short deadline;
// a service that does not answer keeps its last known report, and a role whose service has never answered
// is not checked here (its service still rejects an unknown provider, INVALID_ARGUMENT, when called).
class AgentProviders {
 public:
  // The reporters are not owned and must outlive this object and every Refresh.
  struct Reporters {
    ProviderReporter* planner = nullptr;
    ProviderReporter* executor = nullptr;
    ProviderReporter* memory = nullptr;
  };

  AgentProviders(Reporters reporters, absl::Duration deadline) : reporters_(reporters), deadline_(deadline) {}

  // Asks every agent service again (each with the deadline given at construction) and records the answers;
  // then calls `done` once, on any thread, after every service answered or failed.
  void Refresh(absl::AnyInvocable<void() &&> done);

  // OK, or INVALID_ARGUMENT naming the field and listing the reported providers, e.g.
  // "spec.models.executor.provider: unknown provider 'x' (available: builtin, openai)". An empty provider
  // stands for "builtin" (the resolved default).
  absl::Status Validate(const v1::AgentModels& models) const;

 private:
  enum Role { kPlanner, kExecutor, kSummarizer, kRoles };

  Reporters reporters_;
  absl::Duration deadline_;
  mutable absl::Mutex mu_;
  std::array<std::optional<std::vector<std::string>>, kRoles> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::orchestrator

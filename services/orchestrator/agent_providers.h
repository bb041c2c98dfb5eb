// What the agent services serve, asked at submit: each of the planner, executor and memory (summarizer)
// services checks the job's model spec of its role (InfoService.CheckModel: provider registered, then the
// provider's own rules) and reports its provider names (GetInfoResponse.model_providers). The orchestrator
// keeps no provider list or provider rules of its own.
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
#include "services/orchestrator/calls_in_flight.h"

namespace accelopt::orchestrator {

// How long a submit waits for each agent service's answers.
inline constexpr absl::Duration kAgentCheckDeadline = absl::Seconds(2);

// One agent service's InfoService. Implementations are thread-safe; every method starts the call and
// returns at once, and `done` runs exactly once, on any thread (possibly inside the call).
class AgentInfoClient {
 public:
  using ProvidersDone = absl::AnyInvocable<void(absl::StatusOr<std::vector<std::string>>) &&>;
  using CheckDone = absl::AnyInvocable<void(absl::Status) &&>;
  virtual ~AgentInfoClient() = default;
  // The provider names the service serves.
  virtual void GetProviders(absl::Duration deadline, ProvidersDone done) = 0;
  // OK, INVALID_ARGUMENT naming the field ("model.endpoint: ..."), or the RPC's error.
  virtual void CheckModel(const v1::ModelSpec& model, absl::Duration deadline, CheckDone done) = 0;
};

class GrpcAgentInfoClient final : public AgentInfoClient {
 public:
  explicit GrpcAgentInfoClient(std::shared_ptr<grpc::Channel> channel)
      : stub_(v1::InfoService::NewStub(std::move(channel))) {}
  void GetProviders(absl::Duration deadline, ProvidersDone done) override;
  void CheckModel(const v1::ModelSpec& model, absl::Duration deadline, CheckDone done) override;

 private:
  std::unique_ptr<v1::InfoService::Stub> stub_;
  CallsInFlight calls_;  // last: destroyed first
};

// Checks submitted jobs' models with the agent services. Thread-safe.
//
// When an agent service does not answer within the deadline, its last known provider list is used instead
// (only the provider name is checked then); a role whose service has never answered is not checked here,
// and its service still rejects a bad model spec (INVALID_ARGUMENT) when called.
class AgentProviders {
 public:
  // Not owned; they must outlive this object and every Check.
  struct Clients {
    AgentInfoClient* planner = nullptr;
    AgentInfoClient* executor = nullptr;
    AgentInfoClient* memory = nullptr;
  };

  AgentProviders(Clients clients, absl::Duration deadline) : clients_(clients), deadline_(deadline) {}

  // Asks the three services at once (each call with the deadline given at construction) and calls `done`
  // once, on any thread, after all answered or failed: OK, or INVALID_ARGUMENT for the first bad role with
  // the agent's field under "spec.models.<role>.", e.g.
  // "spec.models.executor.provider: unknown provider 'x' (known: builtin, openai)" or
  // "spec.models.planner.endpoint: ...". An empty provider stands for the resolved default ("builtin").
  void Check(const v1::AgentModels& models, absl::AnyInvocable<void(absl::Status) &&> done);

 private:
  enum Role { kPlanner, kExecutor, kSummarizer, kRoles };
  struct Call;

  void Finish(Call& call);
  // The check against the last known provider list of `role`, when there is one.
  absl::Status CheckReported(Role role, const std::string& provider) const;

  Clients clients_;
  absl::Duration deadline_;
  mutable absl::Mutex mu_;
  std::array<std::optional<std::vector<std::string>>, kRoles> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::orchestrator

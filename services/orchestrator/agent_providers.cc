#include "services/orchestrator/agent_providers.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "libs/core/status_convert.h"
#include "services/orchestrator/job_spec.h"

namespace accelopt::orchestrator {
namespace {

constexpr std::array<const char*, 3> kRoleNames = {"planner", "executor", "summarizer"};

// Starts one unary InfoService call, one of `calls`, with `deadline`; `done` gets the response or the RPC's error.
template <typename Request, typename Response, typename Start>
void StartCall(CallsInFlight& calls, Request request, absl::Duration deadline, Start start,
               absl::AnyInvocable<void(absl::StatusOr<Response>) &&> done) {
  struct Call {
    explicit Call(CallsInFlight::Token t) : token(std::move(t)) {}
    CallsInFlight::Token token;  // first: released after the context
    grpc::ClientContext context;
    Request request;
    Response response;
    absl::AnyInvocable<void(absl::StatusOr<Response>) &&> done;
  };
  auto call = std::make_shared<Call>(calls.Enter());
  call->request = std::move(request);
  call->done = std::move(done);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  start(&call->context, &call->request, &call->response, [call](grpc::Status status) {
    if (!status.ok()) return std::move(call->done)(core::FromGrpcStatus(status));
    std::move(call->done)(std::move(call->response));
  });
}

}  // namespace

void GrpcAgentInfoClient::GetProviders(absl::Duration deadline, ProvidersDone done) {
  StartCall<v1::GetInfoRequest, v1::GetInfoResponse>(
      calls_, {}, deadline,
      [this](auto* context, auto* request, auto* response, auto on_done) {
        stub_->async()->GetInfo(context, request, response, std::move(on_done));
      },
      [done = std::move(done)](absl::StatusOr<v1::GetInfoResponse> info) mutable {
        if (!info.ok()) return std::move(done)(info.status());
        std::move(done)(std::vector<std::string>(info->model_providers().begin(), info->model_providers().end()));
      });
}

void GrpcAgentInfoClient::CheckModel(const v1::ModelSpec& model, absl::Duration deadline, CheckDone done) {
  v1::CheckModelRequest request;
  *request.mutable_model() = model;
  StartCall<v1::CheckModelRequest, v1::CheckModelResponse>(
      calls_, std::move(request), deadline,
      [this](auto* context, auto* request, auto* response, auto on_done) {
        stub_->async()->CheckModel(context, request, response, std::move(on_done));
      },
      [done = std::move(done)](absl::StatusOr<v1::CheckModelResponse> checked) mutable {
        std::move(done)(checked.status());
      });
}

// One Check in flight: the answers of the six calls (providers and model check per role).
struct AgentProviders::Call {
  std::array<v1::ModelSpec, kRoles> specs;
  std::array<absl::StatusOr<std::vector<std::string>>, kRoles> providers;
  std::array<absl::Status, kRoles> checks;
  std::atomic<int> remaining{2 * kRoles};
  absl::AnyInvocable<void(absl::Status) &&> done;
};

void AgentProviders::Check(const v1::AgentModels& models, absl::AnyInvocable<void(absl::Status) &&> done) {
  auto call = std::make_shared<Call>();
  call->specs = {models.planner(), models.executor(), models.summarizer()};
  call->done = std::move(done);
  const std::array<AgentInfoClient*, kRoles> clients = {clients_.planner, clients_.executor, clients_.memory};
  for (int role = 0; role < kRoles; ++role) {
    v1::ModelSpec& spec = call->specs[role];
    if (spec.provider().empty()) spec.set_provider(kDefaultProvider);
    clients[role]->GetProviders(deadline_, [this, call, role](absl::StatusOr<std::vector<std::string>> names) {
      call->providers[role] = std::move(names);
      if (call->remaining.fetch_sub(1) == 1) Finish(*call);
    });
    clients[role]->CheckModel(spec, deadline_, [this, call, role](absl::Status status) {
      call->checks[role] = std::move(status);
      if (call->remaining.fetch_sub(1) == 1) Finish(*call);
    });
  }
}

void AgentProviders::Finish(Call& call) {
  {
    absl::MutexLock lock(&mu_);
    for (int role = 0; role < kRoles; ++role) {
      if (!call.providers[role].ok()) continue;
      std::sort(call.providers[role]->begin(), call.providers[role]->end());
      known_[role] = *call.providers[role];
    }
  }
  for (int role = 0; role < kRoles; ++role) {
    const absl::Status& checked = call.checks[role];
    if (checked.ok()) continue;
    if (absl::IsInvalidArgument(checked)) {
      absl::string_view message = checked.message();
      const std::string prefix = absl::StrCat("spec.models.", kRoleNames[role]);
      return std::move(call.done)(absl::InvalidArgumentError(absl::ConsumePrefix(&message, "model.")
                                                                 ? absl::StrCat(prefix, ".", message)
                                                                 : absl::StrCat(prefix, ": ", message)));
    }
    // The service did not answer (or predates CheckModel): its last known report decides.
    if (absl::Status s = CheckReported(static_cast<Role>(role), call.specs[role].provider()); !s.ok()) {
      return std::move(call.done)(s);
    }
  }
  std::move(call.done)(absl::OkStatus());
}

absl::Status AgentProviders::CheckReported(Role role, const std::string& provider) const {
  absl::MutexLock lock(&mu_);
  if (!known_[role].has_value()) return absl::OkStatus();
  const std::vector<std::string>& known = *known_[role];
  if (std::find(known.begin(), known.end(), provider) != known.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("spec.models.", kRoleNames[role], ".provider: unknown provider '", provider,
                   "' (known: ", known.empty() ? "none" : absl::StrJoin(known, ", "), ")"));
}

}  // namespace accelopt::orchestrator

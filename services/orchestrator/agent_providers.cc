#include "services/orchestrator/agent_providers.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "libs/core/status_convert.h"
#include "services/orchestrator/job_spec.h"

namespace accelopt::orchestrator {

void GrpcProviderReporter::ReportProviders(absl::Duration deadline, Done done) {
  struct Call {
    grpc::ClientContext context;
    v1::GetInfoRequest request;
    v1::GetInfoResponse response;
    Done done;
  };
  auto call = std::make_shared<Call>();
  call->done = std::move(done);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  stub_->async()->GetInfo(&call->context, &call->request, &call->response, [call](grpc::Status status) {
    if (!status.ok()) return std::move(call->done)(core::FromGrpcStatus(status));
    const auto& names = call->response.model_providers();
    std::move(call->done)(std::vector<std::string>(names.begin(), names.end()));
  });
}

void AgentProviders::Refresh(absl::AnyInvocable<void() &&> done) {
  struct Pending {
    std::atomic<int> remaining{kRoles};
    absl::AnyInvocable<void() &&> done;
  };
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);
  const std::array<ProviderReporter*, kRoles> reporters = {reporters_.planner, reporters_.executor, reporters_.memory};
  for (int role = 0; role < kRoles; ++role) {
    reporters[role]->ReportProviders(deadline_, [this, role, pending](absl::StatusOr<std::vector<std::string>> names) {
      if (names.ok()) {
        std::sort(names->begin(), names->end());
        absl::MutexLock lock(&mu_);
        known_[role] = *std::move(names);
      }
      if (pending->remaining.fetch_sub(1) == 1) std::move(pending->done)();
    });
  }
}

absl::Status AgentProviders::Validate(const v1::AgentModels& models) const {
  const std::array<std::pair<const v1::ModelSpec*, const char*>, kRoles> specs = {
      std::pair{&models.planner(), "planner"}, {&models.executor(), "executor"}, {&models.summarizer(), "summarizer"}};
  absl::MutexLock lock(&mu_);
  for (int role = 0; role < kRoles; ++role) {
    if (!known_[role].has_value()) continue;
    const std::vector<std::string>& available = *known_[role];
    const std::string provider =
        specs[role].first->provider().empty() ? kDefaultProvider : specs[role].first->provider();
    if (std::find(available.begin(), available.end(), provider) != available.end()) continue;
    return absl::InvalidArgumentError(
        absl::StrCat("spec.models.", specs[role].second, ".provider: unknown provider '", provider,
                     "' (available: ", available.empty() ? "none" : absl::StrJoin(available, ", "), ")"));
  }
  return absl::OkStatus();
}

}  // namespace accelopt::orchestrator

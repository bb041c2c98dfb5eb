#include "services/planner/planner.h"

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "libs/llm/completion.h"
#include "libs/llm/sample_batch.h"

namespace accelopt::planner {

absl::StatusOr<llm::PlannerModel*> Planner::Validate(const v1::PlanRequest& request) const {
  if (request.num_plans() < 1 || request.num_plans() > kMaxPlans) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_plans: must be between 1 and ", kMaxPlans, ", got ", request.num_plans()));
  }
  if (request.kernel().source().empty()) return absl::InvalidArgumentError("kernel.source: required");
  if (request.kernel().source().size() > kMaxKernelBytes) {
    return absl::InvalidArgumentError(absl::StrCat("kernel.source: ", request.kernel().source().size(),
                                                   " bytes is more than the limit of ", kMaxKernelBytes));
  }
  if (!request.has_model()) return absl::InvalidArgumentError("model: required");
  return models_.FindValid(request.model());
}

void Planner::Plan(std::shared_ptr<const v1::PlanRequest> request, llm::PlannerModel& model,
                   absl::AnyInvocable<void(v1::PlanResponse)> done) {
  const int n = request->num_plans();
  auto batch = llm::SampleBatch<v1::PlanResponse>::Create(n, std::move(done), model.PromptsFor(request->model()));
  boost::asio::post(pool_, [this, request, batch, &model, n] {
    for (int i = 0; i < n; ++i) {
      model.Plan(request, i, llm::SampleSeed(request->seed(), i), [this, batch, i](llm::Metered<llm::PlanDraft> r) {
        metrics_.Sample(r.value.ok() ? "plan" : "error");
        batch->Record(i, r.usage, [&](v1::PlanSample& sample) {
          if (!r.value.ok()) {
            sample.set_error(std::string(r.value.status().message()));
            return;
          }
          v1::Plan* plan = sample.mutable_plan();
          plan->set_text(std::move(r.value->text));
          plan->set_reasoning(std::move(r.value->reasoning));
          plan->set_title(std::move(r.value->title));
          plan->set_transformation(std::move(r.value->transformation));
        });
      });
    }
  });
}

}  // namespace accelopt::planner

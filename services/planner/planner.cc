#include "services/planner/planner.h"

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libs/llm/completion.h"

namespace accelopt::planner {
namespace {

// Collects the samples of one request; the last one to arrive completes the call.
struct PlanBatch {
  absl::Mutex mu;
  v1::PlanResponse response ABSL_GUARDED_BY(mu);
  int remaining ABSL_GUARDED_BY(mu) = 0;
  absl::AnyInvocable<void(v1::PlanResponse)> done;
};

}  // namespace

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
  auto batch = std::make_shared<PlanBatch>();
  const int n = request->num_plans();
  {
    absl::MutexLock lock(&batch->mu);
    batch->remaining = n;
    for (int i = 0; i < n; ++i) batch->response.add_samples();
  }
  batch->done = std::move(done);
  boost::asio::post(pool_, [this, request, batch, &model, n] {
    for (int i = 0; i < n; ++i) {
      model.Plan(request, i, llm::SampleSeed(request->seed(), i), [this, batch, i](llm::Metered<llm::PlanDraft> r) {
        metrics_.Sample(r.value.ok() ? "plan" : "error");
        bool last = false;
        {
          absl::MutexLock lock(&batch->mu);
          v1::PlanSample* sample = batch->response.mutable_samples(i);
          *sample->mutable_usage() = r.usage;
          llm::AddUsage(r.usage, batch->response.mutable_usage());
          if (r.value.ok()) {
            v1::Plan* plan = sample->mutable_plan();
            plan->set_text(std::move(r.value->text));
            plan->set_reasoning(std::move(r.value->reasoning));
            plan->set_title(std::move(r.value->title));
            plan->set_transformation(std::move(r.value->transformation));
          } else {
            sample->set_error(std::string(r.value.status().message()));
          }
          last = --batch->remaining == 0;
        }
        if (last) {
          v1::PlanResponse response;
          {
            absl::MutexLock lock(&batch->mu);
            response = std::move(batch->response);
          }
          batch->done(std::move(response));
        }
      });
    }
  });
}

}  // namespace accelopt::planner

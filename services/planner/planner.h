// The planner's domain logic: validates a PlanRequest and draws its N plan samples concurrently through the
// model registered for the request's provider. No gRPC types.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "accelopt/v1/planner_service.pb.h"
#include "libs/llm/planner_model.h"
#include "libs/llm/provider.h"
#include "services/planner/planner_metrics.h"

namespace accelopt::planner {

// Largest kernel source accepted, bytes.
inline constexpr size_t kMaxKernelBytes = 256 * 1024;
// Most plans one request may ask for.
inline constexpr int kMaxPlans = 64;

// Thread-safe; holds no per-request state.
class Planner {
 public:
  // Nothing is owned; all must outlive the planner.
  Planner(const llm::ProviderRegistry<llm::PlannerModel>& models, boost::asio::thread_pool& pool,
          const PlannerMetrics& metrics)
      : models_(models), pool_(pool), metrics_(metrics) {}

  // The model that will serve `request`, or INVALID_ARGUMENT naming the field: num_plans (1..64),
  // kernel.source (non-empty, at most 256 KiB), model (present), model.provider (registered), and whatever
  // the provider checks (e.g. model.endpoint, model.prompt_set).
  absl::StatusOr<llm::PlannerModel*> Validate(const v1::PlanRequest& request) const;

  // Draws request->num_plans() samples concurrently (started from the pool, so the caller never blocks).
  // `done` runs once with one sample per slot, in index order: a plan, or the reason that slot has none.
  // A failed sample never fails the call. Response usage is the sum over samples.
  void Plan(std::shared_ptr<const v1::PlanRequest> request, llm::PlannerModel& model,
            absl::AnyInvocable<void(v1::PlanResponse)> done);

 private:
  const llm::ProviderRegistry<llm::PlannerModel>& models_;
  boost::asio::thread_pool& pool_;
  const PlannerMetrics& metrics_;
};

}  // namespace accelopt::planner

// The `builtin` provider of the planner and executor agents: no LLM. The planner ranks the catalogue
// transformations that apply to the kernel (plan_ranking.h); the executor applies the chosen one to the
// kernel's syntax tree with the rewrite engine. Both run the engine in the sandbox on their own threads.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "libs/builtin/rewriter.h"
#include "libs/llm/executor_model.h"
#include "libs/llm/planner_model.h"

namespace accelopt::builtin {

// Plan sample i of a request is the i-th transformation of the request's seeded ranking, so the N samples of
// one request are N different plans. A sample past the end of the ranking fails with a precise reason.
class BuiltinPlanner final : public llm::PlannerModel {
 public:
  // Samples run on `threads` threads of this object.
  BuiltinPlanner(std::shared_ptr<const Rewriter> rewriter, int threads);
  ~BuiltinPlanner() override;

  absl::Status ValidateSpec(const v1::ModelSpec& spec) const override;
  void Plan(std::shared_ptr<const v1::PlanRequest> request, int index, uint64_t seed,
            absl::AnyInvocable<void(llm::Metered<llm::PlanDraft>)> done) override;

 private:
  // Analysis of a kernel, computed once per kernel hash and shared by concurrent samples.
  absl::StatusOr<std::vector<RewriteCandidate>> Analyze(const std::string& source);

  std::shared_ptr<const Rewriter> rewriter_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<absl::StatusOr<std::vector<RewriteCandidate>>>> cache_
      ABSL_GUARDED_BY(mu_);
  boost::asio::thread_pool pool_;
};

// Applies the plan's `builtin:` line. Deterministic: every sample of a request yields the same kernel (the
// orchestrator records the repeats as duplicates).
class BuiltinExecutor final : public llm::ExecutorModel {
 public:
  BuiltinExecutor(std::shared_ptr<const Rewriter> rewriter, int threads);
  ~BuiltinExecutor() override;

  absl::Status ValidateSpec(const v1::ModelSpec& spec) const override;
  void Implement(std::shared_ptr<const v1::ImplementRequest> request, int index, uint64_t seed,
                 absl::AnyInvocable<void(llm::Metered<llm::KernelDraft>)> done) override;

 private:
  std::shared_ptr<const Rewriter> rewriter_;
  boost::asio::thread_pool pool_;
};

// The first line of `plan_text` that starts with "builtin:", or empty.
std::string FindPlanLine(const std::string& plan_text);

}  // namespace accelopt::builtin

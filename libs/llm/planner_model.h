// PlannerModel: how the planner service draws one plan, whatever the provider (prompted LLM or builtin).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "accelopt/v1/planner_service.pb.h"
#include "libs/llm/completion.h"

namespace accelopt::llm {

// One plan as a model produced it.
struct PlanDraft {
  // The whole answer: the executor's instruction.
  std::string text;
  std::string reasoning;
  std::string title;
  // Builtin provider: the catalogue transformation applied; empty for LLM plans.
  std::string transformation;
};

// Implementations receive the whole structured request (kernel, profile, problem, experiences), so a
// provider that does not use prompts has everything it needs. Thread-safe.
class PlannerModel {
 public:
  virtual ~PlannerModel() = default;
  // OK when this provider can serve `spec`; else INVALID_ARGUMENT naming the model.* field.
  virtual absl::Status ValidateSpec(const v1::ModelSpec& spec) const = 0;
  // Draws sample `index` of `request` with `seed` (SampleSeed of the request seed and index). Returns at once;
  // `done` runs exactly once, possibly on another thread.
  virtual void Plan(std::shared_ptr<const v1::PlanRequest> request, int index, uint64_t seed,
                    absl::AnyInvocable<void(Metered<PlanDraft>)> done) = 0;
  // The prompt set a call with `spec` uses (PlanResponse.prompts); nullopt for providers without prompts.
  virtual std::optional<v1::PromptSetUsed> PromptsFor(const v1::ModelSpec& spec) const { return std::nullopt; }
};

}  // namespace accelopt::llm

// The prompt-driven agent models ("openai" provider): render the prompt set's templates, call a ModelProvider,
// read the answer.
#pragma once

#include <string>
#include <vector>

#include "libs/llm/executor_model.h"
#include "libs/llm/planner_model.h"
#include "libs/llm/prompt_library.h"
#include "libs/llm/provider.h"

namespace accelopt::llm {

// Checks what a prompted agent needs: `provider` can call the spec's endpoint and model
// (ModelProvider::ValidateSpec), and model.prompt_set holds `templates`. INVALID_ARGUMENT naming the field.
absl::Status ValidatePromptedSpec(const v1::ModelSpec& spec, const ModelProvider& provider,
                                  const PromptLibrary& prompts, const std::vector<std::string>& templates);

// planner_system + planner_user; the plan is the whole answer, titled by PlanTitle.
class PromptedPlanner final : public PlannerModel {
 public:
  // Neither is owned; both must outlive this object.
  PromptedPlanner(ModelProvider& provider, const PromptLibrary& prompts) : provider_(provider), prompts_(prompts) {}
  absl::Status ValidateSpec(const v1::ModelSpec& spec) const override;
  void Plan(std::shared_ptr<const v1::PlanRequest> request, int index, uint64_t seed,
            absl::AnyInvocable<void(Metered<PlanDraft>)> done) override;
  std::optional<v1::PromptSetUsed> PromptsFor(const v1::ModelSpec& spec) const override;

 private:
  ModelProvider& provider_;
  const PromptLibrary& prompts_;
};

// executor_system + executor_user; the source is KernelSource of the answer (text_extract.h).
class PromptedExecutor final : public ExecutorModel {
 public:
  PromptedExecutor(ModelProvider& provider, const PromptLibrary& prompts) : provider_(provider), prompts_(prompts) {}
  absl::Status ValidateSpec(const v1::ModelSpec& spec) const override;
  void Implement(std::shared_ptr<const v1::ImplementRequest> request, int index, uint64_t seed,
                 absl::AnyInvocable<void(Metered<KernelDraft>)> done) override;
  std::optional<v1::PromptSetUsed> PromptsFor(const v1::ModelSpec& spec) const override;

 private:
  ModelProvider& provider_;
  const PromptLibrary& prompts_;
};

}  // namespace accelopt::llm

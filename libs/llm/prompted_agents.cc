#include "libs/llm/prompted_agents.h"

#include "absl/strings/str_cat.h"
#include "libs/llm/answer_by.h"
#include "libs/llm/planner_prompt.h"
#include "libs/llm/text_extract.h"

namespace accelopt::llm {

absl::Status ValidatePromptedSpec(const v1::ModelSpec& spec, const ModelProvider& provider,
                                  const PromptLibrary& prompts, const std::vector<std::string>& templates) {
  if (absl::Status s = provider.ValidateSpec(spec); !s.ok()) return s;
  if (spec.timeout_seconds() < 0) return absl::InvalidArgumentError("model.timeout_seconds: must not be negative");
  if (spec.max_tokens() < 0) return absl::InvalidArgumentError("model.max_tokens: must not be negative");
  return prompts.Check(spec.prompt_set(), templates);
}

namespace {

const std::vector<std::string>& PlannerTemplates() {
  static const auto* names = new std::vector<std::string>{"planner_system", "planner_user"};
  return *names;
}

const std::vector<std::string>& ExecutorTemplates() {
  static const auto* names = new std::vector<std::string>{"executor_system", "executor_user"};
  return *names;
}

std::optional<v1::PromptSetUsed> FingerprintOrNothing(const PromptLibrary& prompts, const v1::ModelSpec& spec,
                                                      const std::vector<std::string>& names) {
  absl::StatusOr<v1::PromptSetUsed> used = prompts.Fingerprint(spec.prompt_set(), names);
  if (!used.ok()) return std::nullopt;  // every call with this spec fails the same way, naming the set
  return *std::move(used);
}

}  // namespace

absl::Status PromptedPlanner::ValidateSpec(const v1::ModelSpec& spec) const {
  return ValidatePromptedSpec(spec, provider_, prompts_, PlannerTemplates());
}

std::optional<v1::PromptSetUsed> PromptedPlanner::PromptsFor(const v1::ModelSpec& spec) const {
  return FingerprintOrNothing(prompts_, spec, PlannerTemplates());
}

void PromptedPlanner::Plan(std::shared_ptr<const v1::PlanRequest> request, int index, uint64_t seed,
                           absl::AnyInvocable<void(Metered<PlanDraft>)> done) {
  const v1::ModelSpec& spec = request->model();
  absl::StatusOr<std::string> system =
      prompts_.Render(spec.prompt_set(), "planner_system", PlannerSystemValues(*request));
  absl::StatusOr<std::string> user = prompts_.Render(spec.prompt_set(), "planner_user", PlannerUserValues(*request));
  if (!system.ok() || !user.ok()) {
    done(Metered<PlanDraft>{system.ok() ? user.status() : system.status(), {}});
    return;
  }
  provider_.Complete(
      CompletionRequest{"planner", spec, *std::move(system), *std::move(user), seed, AnswerBy(request->answer_by())},
      [done = std::move(done)](Metered<Completion> completion) mutable {
        Metered<PlanDraft> out{absl::UnknownError(""), completion.usage};
        if (!completion.value.ok()) {
          out.value = completion.value.status();
        } else if (completion.value->text.empty()) {
          out.value = absl::NotFoundError("the model returned an empty plan");
        } else {
          PlanDraft draft;
          draft.title = PlanTitle(completion.value->text);
          draft.text = std::move(completion.value->text);
          draft.reasoning = std::move(completion.value->reasoning);
          out.value = std::move(draft);
        }
        done(std::move(out));
      });
}

absl::Status PromptedExecutor::ValidateSpec(const v1::ModelSpec& spec) const {
  return ValidatePromptedSpec(spec, provider_, prompts_, ExecutorTemplates());
}

std::optional<v1::PromptSetUsed> PromptedExecutor::PromptsFor(const v1::ModelSpec& spec) const {
  return FingerprintOrNothing(prompts_, spec, ExecutorTemplates());
}

void PromptedExecutor::Implement(std::shared_ptr<const v1::ImplementRequest> request, int index, uint64_t seed,
                                 absl::AnyInvocable<void(Metered<KernelDraft>)> done) {
  const v1::ModelSpec& spec = request->model();
  absl::StatusOr<std::string> system = prompts_.Render(spec.prompt_set(), "executor_system", {});
  absl::StatusOr<std::string> user = prompts_.Render(spec.prompt_set(), "executor_user",
                                                     {{"problem_source", request->problem().reference_source()},
                                                      {"kernel_source", request->kernel().source()},
                                                      {"plan", request->plan().text()}});
  if (!system.ok() || !user.ok()) {
    done(Metered<KernelDraft>{system.ok() ? user.status() : system.status(), {}});
    return;
  }
  provider_.Complete(
      CompletionRequest{"executor", spec, *std::move(system), *std::move(user), seed, AnswerBy(request->answer_by())},
      [done = std::move(done)](Metered<Completion> completion) mutable {
        Metered<KernelDraft> out{absl::UnknownError(""), completion.usage};
        if (!completion.value.ok()) {
          out.value = completion.value.status();
        } else if (absl::StatusOr<std::string> code = KernelSource(completion.value->text); !code.ok()) {
          out.value = code.status();
        } else {
          out.value = KernelDraft{*std::move(code), std::move(completion.value->reasoning)};
        }
        done(std::move(out));
      });
}

}  // namespace accelopt::llm

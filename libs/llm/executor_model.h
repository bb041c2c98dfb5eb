// ExecutorModel: how the executor service draws one new kernel source, whatever the provider.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "accelopt/v1/executor_service.pb.h"
#include "libs/llm/completion.h"

namespace accelopt::llm {

// A kernel module as a model produced it, before the executor's checks.
struct KernelDraft {
  std::string source;
  std::string reasoning;
};

// Implementations receive the whole structured request (kernel, problem, plan). Thread-safe.
class ExecutorModel {
 public:
  virtual ~ExecutorModel() = default;
  // OK when this provider can serve `spec`; else INVALID_ARGUMENT naming the model.* field.
  virtual absl::Status ValidateSpec(const v1::ModelSpec& spec) const = 0;
  // Draws sample `index` of `request` with `seed`. Returns at once; `done` runs exactly once, possibly on
  // another thread. A sample without usable source fails with a precise reason (e.g. NOT_FOUND "no fenced
  // code block in the response").
  virtual void Implement(std::shared_ptr<const v1::ImplementRequest> request, int index, uint64_t seed,
                         absl::AnyInvocable<void(Metered<KernelDraft>)> done) = 0;
  // The prompt set a call with `spec` uses (ImplementResponse.prompts); nullopt for providers without prompts.
  virtual std::optional<v1::PromptSetUsed> PromptsFor(const v1::ModelSpec& spec) const { return std::nullopt; }
};

}  // namespace accelopt::llm

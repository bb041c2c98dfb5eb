// How agents get their models: ModelProvider (text in, completion out) and ProviderRegistry, which picks an
// implementation by ModelSpec.provider ("openai", "builtin", ...). docs/agents.md says how registration works.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "accelopt/v1/common.pb.h"
#include "libs/core/splitmix64.h"
#include "libs/llm/completion.h"

namespace accelopt::llm {

// One single-turn chat call.
struct CompletionRequest {
  // Metrics label naming the calling agent: "planner", "executor", "summarizer".
  std::string agent;
  v1::ModelSpec model;
  std::string system;
  std::string user;
  // Sampling seed sent to the endpoint (deterministic servers reproduce a sample); nullopt sends none.
  std::optional<uint64_t> seed;
  // No attempt, wait or retry goes past this (the agent's answer_by): the call ends DEADLINE_EXCEEDED with the
  // usage spent so far.
  absl::Time deadline = absl::InfiniteFuture();
};

using CompletionCallback = absl::AnyInvocable<void(Metered<Completion>)>;

// A text model reached through prompts. Implementations are thread-safe.
class ModelProvider {
 public:
  virtual ~ModelProvider() = default;
  // Starts the call and returns at once; `done` runs exactly once, on a thread of the provider (never inside
  // this call). Failures are in the Metered value, never thrown.
  virtual void Complete(CompletionRequest request, CompletionCallback done) = 0;
  // Whether `spec` names something this provider can call (an endpoint and model it is configured for).
  // INVALID_ARGUMENT naming the field. Checked at submit (InfoService.CheckModel) and on every agent call.
  virtual absl::Status ValidateSpec(const v1::ModelSpec& spec) const { return absl::OkStatus(); }
};

// The seed of sample `index` of a request seeded with `seed` (SplitMix64 of both): distinct per sample,
// identical across reruns.
inline uint64_t SampleSeed(uint64_t seed, int index) {
  return core::SplitMix64(seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(index));
}

// Provider implementations of one kind, keyed by provider name (ModelSpec.provider): the text models of a
// process (ModelProvider), and the agent models built on them (PlannerModel, ExecutorModel, the memory
// service's Summarizer). Fill it at start-up, then only read it: concurrent Find() and Names() calls are safe.
template <typename Model>
class ProviderRegistry {
 public:
  // Adds (or replaces) the implementation for `provider`.
  void Register(std::string provider, std::unique_ptr<Model> model) { models_[std::move(provider)] = std::move(model); }

  // The implementation named `provider`. INVALID_ARGUMENT naming `model.provider` when it is empty or not
  // registered (the message lists the registered names).
  absl::StatusOr<Model*> Find(absl::string_view provider) const {
    if (provider.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("model.provider: required (one of: ", KnownNames(), ")"));
    }
    auto it = models_.find(provider);
    if (it == models_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model.provider: unknown provider '", provider, "' (known: ", KnownNames(), ")"));
    }
    return it->second.get();
  }
  absl::StatusOr<Model*> Find(const v1::ModelSpec& spec) const { return Find(spec.provider()); }

  // Find, then the provider's own checks of `spec` (Model::ValidateSpec): what every agent call and the
  // submit-time check (InfoService.CheckModel) run. INVALID_ARGUMENT naming the field.
  absl::StatusOr<Model*> FindValid(const v1::ModelSpec& spec) const {
    absl::StatusOr<Model*> model = Find(spec);
    if (!model.ok()) return model.status();
    if (absl::Status s = (*model)->ValidateSpec(spec); !s.ok()) return s;
    return model;
  }

  // The registered provider names, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : models_) names.push_back(entry.first);
    return names;
  }

  // Calls `visit(name, model)` for each registered provider, in name order.
  template <typename Visit>
  void ForEach(Visit visit) const {
    for (const auto& [name, model] : models_) visit(name, *model);
  }

 private:
  std::string KnownNames() const { return models_.empty() ? "none" : absl::StrJoin(Names(), ", "); }

  std::map<std::string, std::unique_ptr<Model>, std::less<>> models_;
};

}  // namespace accelopt::llm

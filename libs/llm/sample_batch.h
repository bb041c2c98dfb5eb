// The samples of one planner or executor request, collected as they complete (in any order, on any thread).
#pragma once

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "accelopt/v1/common.pb.h"
#include "libs/llm/completion.h"

namespace accelopt::llm {

// `Response` is a proto with `repeated Sample samples`, a `TokenUsage usage` total, each Sample with its own
// `usage`, and `PromptSetUsed prompts` (PlanResponse, ImplementResponse). The call that records the last
// sample hands the response to `done`.
template <typename Response>
class SampleBatch {
 public:
  using Sample = std::remove_pointer_t<decltype(std::declval<Response&>().add_samples())>;

  // A batch of `n` (>= 1) empty samples, answered with `prompts` when the model used a prompt set.
  static std::shared_ptr<SampleBatch> Create(int n, absl::AnyInvocable<void(Response)> done,
                                             std::optional<v1::PromptSetUsed> prompts = std::nullopt) {
    return std::shared_ptr<SampleBatch>(new SampleBatch(n, std::move(done), std::move(prompts)));
  }

  // Records sample `i` (each index once): its `usage`, also added to the response's total, and whatever `fill`
  // writes into it (the result or an error). `fill` runs under the batch's lock and must not block.
  void Record(int i, const v1::TokenUsage& usage, absl::FunctionRef<void(Sample&)> fill) {
    Response finished;
    {
      absl::MutexLock lock(&mu_);
      Sample* sample = response_.mutable_samples(i);
      *sample->mutable_usage() = usage;
      AddUsage(usage, response_.mutable_usage());
      fill(*sample);
      if (--remaining_ > 0) return;
      finished = std::move(response_);
    }
    done_(std::move(finished));
  }

 private:
  SampleBatch(int n, absl::AnyInvocable<void(Response)> done, std::optional<v1::PromptSetUsed> prompts)
      : remaining_(n), done_(std::move(done)) {
    for (int i = 0; i < n; ++i) response_.add_samples();
    if (prompts.has_value()) *response_.mutable_prompts() = *std::move(prompts);
  }

  absl::Mutex mu_;
  Response response_ ABSL_GUARDED_BY(mu_);
  int remaining_ ABSL_GUARDED_BY(mu_);
  absl::AnyInvocable<void(Response)> done_;  // called once, by the last Record
};

}  // namespace accelopt::llm

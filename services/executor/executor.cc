#include "services/executor/executor.h"

#include <boost/asio/post.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libs/core/log.h"
#include "libs/core/sha256.h"
#include "libs/llm/completion.h"
#include "libs/llm/sample_batch.h"
#include "services/executor/kernel_source.h"

namespace accelopt::executor {

absl::StatusOr<v1::Kernel> FinishKernel(const llm::KernelDraft& draft, const v1::Kernel& parent,
                                        const SyntaxChecker& checker, const ExecutorMetrics& metrics) {
  if (!DefinesKernelFunction(draft.source)) {
    return absl::InvalidArgumentError("code block has no `kernel` function");
  }
  absl::Status parses = checker.Check(draft.source);
  if (parses.code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat("does not parse: ", parses.message()));
  }
  if (!parses.ok()) {
    metrics.syntax_check_unavailable.Increment();
    ACCELOPT_LOG(WARNING) << "kernel passed on without a syntax check: " << parses.message();
  }
  v1::Kernel kernel;
  kernel.set_source(PrependStandardImports(draft.source));
  kernel.set_sha256(core::Sha256Hex(kernel.source()));
  kernel.set_parent_sha256(parent.sha256().empty() ? core::Sha256Hex(parent.source()) : parent.sha256());
  return kernel;
}

absl::StatusOr<llm::ExecutorModel*> Executor::Validate(const v1::ImplementRequest& request) const {
  if (request.num_samples() < 1 || request.num_samples() > kMaxSamples) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_samples: must be between 1 and ", kMaxSamples, ", got ", request.num_samples()));
  }
  if (request.kernel().source().empty()) return absl::InvalidArgumentError("kernel.source: required");
  if (request.kernel().source().size() > kMaxKernelBytes) {
    return absl::InvalidArgumentError(absl::StrCat("kernel.source: ", request.kernel().source().size(),
                                                   " bytes is more than the limit of ", kMaxKernelBytes));
  }
  if (request.plan().text().empty()) return absl::InvalidArgumentError("plan.text: required");
  if (!request.has_model()) return absl::InvalidArgumentError("model: required");
  return models_.FindValid(request.model());
}

void Executor::Implement(std::shared_ptr<const v1::ImplementRequest> request, llm::ExecutorModel& model,
                         absl::AnyInvocable<void(v1::ImplementResponse)> done) {
  const int n = request->num_samples();
  auto batch = llm::SampleBatch<v1::ImplementResponse>::Create(n, std::move(done), model.PromptsFor(request->model()));
  auto record = [this, batch](int i, absl::StatusOr<v1::Kernel> kernel, const v1::TokenUsage& usage,
                              absl::string_view outcome) {
    metrics_.Sample(outcome);
    batch->Record(i, usage, [&](v1::KernelSample& sample) {
      if (kernel.ok()) {
        *sample.mutable_kernel() = *std::move(kernel);
      } else {
        sample.set_error(std::string(kernel.status().message()));
      }
    });
  };
  boost::asio::post(pool_, [this, request, record, &model, n] {
    for (int i = 0; i < n; ++i) {
      model.Implement(
          request, i, llm::SampleSeed(request->seed(), i),
          [this, request, record, i](llm::Metered<llm::KernelDraft> draft) {
            if (!draft.value.ok()) {
              bool no_block = draft.value.status().code() == absl::StatusCode::kNotFound;
              record(i, draft.value.status(), draft.usage, no_block ? "no_code_block" : "model_error");
              return;
            }
            // The syntax check blocks: run it on the pool, not on the model's thread.
            boost::asio::post(pool_, [this, request, record, i, draft = std::move(draft)] {
              absl::StatusOr<v1::Kernel> kernel = FinishKernel(*draft.value, request->kernel(), checker_, metrics_);
              absl::string_view outcome = "kernel";
              if (!kernel.ok()) {
                outcome = absl::StartsWith(kernel.status().message(), "does not parse") ? "syntax_error"
                                                                                        : "no_kernel_function";
              }
              record(i, std::move(kernel), draft.usage, outcome);
            });
          });
    }
  });
}

}  // namespace accelopt::executor

// The executor's domain logic: validates an ImplementRequest, draws its K kernel samples concurrently through
// the model registered for the request's provider, and checks each new kernel. No gRPC types.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "accelopt/v1/executor_service.pb.h"
#include "libs/llm/executor_model.h"
#include "libs/llm/provider.h"
#include "services/executor/executor_metrics.h"
#include "services/executor/syntax_checker.h"

namespace accelopt::executor {

// Largest kernel source accepted, bytes.
inline constexpr size_t kMaxKernelBytes = 256 * 1024;
// Most samples one request may ask for.
inline constexpr int kMaxSamples = 64;

// Turns a model's draft into the sample's kernel: it must define `kernel` (or `optimized_kernel`) and parse
// (line numbers count from the first line of the code block); then the missing standard imports are
// prepended and the hashes set. Errors: "code block has no `kernel` function", "does not parse: line N: ...".
// A syntax check that cannot run lets the kernel through (counted in a metric).
absl::StatusOr<v1::Kernel> FinishKernel(const llm::KernelDraft& draft, const v1::Kernel& parent,
                                        const SyntaxChecker& checker, const ExecutorMetrics& metrics);

// Thread-safe; holds no per-request state.
class Executor {
 public:
  // Nothing is owned; all must outlive the executor. `pool` runs the blocking syntax checks.
  Executor(const llm::ProviderRegistry<llm::ExecutorModel>& models, const SyntaxChecker& checker,
           boost::asio::thread_pool& pool, const ExecutorMetrics& metrics)
      : models_(models), checker_(checker), pool_(pool), metrics_(metrics) {}

  // The model that will serve `request`, or INVALID_ARGUMENT naming the field: num_samples (1..64),
  // kernel.source (non-empty, at most 256 KiB), plan.text (non-empty), model, model.provider, and whatever
  // the provider checks.
  absl::StatusOr<llm::ExecutorModel*> Validate(const v1::ImplementRequest& request) const;

  // Draws request->num_samples() samples concurrently; `done` runs once with one sample per slot, in index
  // order: a checked kernel (parent_sha256 = the input kernel's hash) or the precise reason there is none.
  // Response usage is the sum over samples.
  void Implement(std::shared_ptr<const v1::ImplementRequest> request, llm::ExecutorModel& model,
                 absl::AnyInvocable<void(v1::ImplementResponse)> done);

 private:
  const llm::ProviderRegistry<llm::ExecutorModel>& models_;
  const SyntaxChecker& checker_;
  boost::asio::thread_pool& pool_;
  const ExecutorMetrics& metrics_;
};

}  // namespace accelopt::executor

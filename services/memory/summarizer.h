// The summarizer agent's interface: turns one oriented slow -> fast kernel pair into the text of an
// experience. Implementations are chosen per request by ModelSpec.provider (see SummarizerRegistry).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::memory {

// One pair to summarize. `slow` is always the slower kernel, whatever the direction of the measurement.
struct SummaryInput {
  std::string slow_kernel;
  std::string fast_kernel;
  // Speedup of fast over slow (>= 1), filled into the prompt.
  double speedup = 1.0;
  // True when the pair came from a regression (the new kernel was the slow one).
  bool regression = false;
  // The plan that produced the new kernel; `plan.transformation` names the catalogue transformation when
  // the builtin optimizer made it, and `plan.text` says where it applied.
  v1::Plan plan;
  // Problem name and device, for context.
  std::string problem;
  v1::Device device = v1::DEVICE_UNSPECIFIED;
  v1::ModelSpec model;
  // Sampling seed for the model call (derived from the request seed and the pair), so reruns can reproduce it.
  uint64_t seed = 0;
};

// What the summarizer wrote about one pair.
struct SummaryOutput {
  // The model answered "No optimization found" (the kernels do the same thing): nothing to store.
  bool no_optimization = false;
  std::string title;
  std::string description;
  std::string before_snippet;
  std::string after_snippet;
  // Full text shown to the planner.
  std::string summary;
  // Catalogue transformation the experience is about (builtin), else empty.
  std::string transformation;
  // Model (or "builtin") that wrote it, recorded in the provenance.
  std::string model;
};

// The outcome of one summarizer call and what it cost (requests and tokens count on failure too).
struct SummaryAnswer {
  absl::StatusOr<SummaryOutput> summary;
  v1::TokenUsage usage;
};

using SummaryCallback = std::function<void(SummaryAnswer)>;

// Thread-safe: Summarize may be called concurrently from any thread.
class Summarizer {
 public:
  virtual ~Summarizer() = default;

  // Checks the fields of `model` this provider needs (e.g. endpoint, model, prompt_set). INVALID_ARGUMENT
  // naming the field ("model.endpoint: ..."). Called on the gRPC thread: must not block.
  virtual absl::Status ValidateSpec(const v1::ModelSpec& model) const = 0;

  // Summarizes one pair and calls `done` exactly once, on any thread, possibly before returning. It must not
  // block the caller on network I/O: a remote implementation returns at once and calls `done` from its own
  // threads. Errors go into the answer (UNAVAILABLE / DEADLINE_EXCEEDED for an unreachable or slow
  // endpoint, DATA_LOSS for an unusable answer); they are per-pair failures, never a failed RPC.
  virtual void Summarize(const SummaryInput& input, SummaryCallback done) = 0;

  // The prompt set a call with `model` uses (SummarizeIterationResponse.prompts); nullopt for providers
  // without prompts.
  virtual std::optional<v1::PromptSetUsed> PromptsFor(const v1::ModelSpec& model) const { return std::nullopt; }
};

}  // namespace accelopt::memory

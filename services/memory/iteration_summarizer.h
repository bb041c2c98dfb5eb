// SummarizeIteration's logic: select an iteration's slow-fast pairs, summarize them concurrently, store the
// experiences in one atomic write. Retries of the same (namespace, job, iteration) store nothing twice.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "accelopt/v1/memory_service.pb.h"
#include "services/memory/experience_store.h"
#include "services/memory/memory_metrics.h"
#include "services/memory/pair_selection.h"
#include "services/memory/summarizer_registry.h"

namespace accelopt::memory {

// INVALID_ARGUMENT naming the first bad field: job_id, namespace, iteration, max_experiences,
// positive_threshold, negative_threshold, model.provider (unknown to `summarizers`) or a model field the
// provider needs (its ValidateSpec).
absl::Status ValidateSummarizeRequest(const v1::SummarizeIterationRequest& request,
                                      const SummarizerRegistry& summarizers);

// The deterministic id of the experience made from `candidate_id`'s pair in iteration `key`, so that a
// retried iteration finds what it already stored: "exp-" + 24 hex digits of SHA-256 over the namespace, job,
// iteration, candidate and orientation.
std::string ExperienceId(const IterationKey& key, const std::string& candidate_id, bool regression);

// Thread-safe; Run may be called concurrently. Nothing here blocks a gRPC thread: Run is meant to run on
// `pool`, and everything after the summarizer calls is posted back to `pool`.
class IterationSummarizer {
 public:
  using Clock = std::function<absl::Time()>;
  using Done = std::function<void(absl::StatusOr<v1::SummarizeIterationResponse>)>;

  // None of the pointers is owned; all must outlive every Run (join `pool` before destroying them).
  IterationSummarizer(ExperienceStore* store, const SummarizerRegistry* summarizers, MemoryMetrics* metrics,
                      boost::asio::thread_pool* pool, Clock now = absl::Now);

  // Runs one validated request (see ValidateSummarizeRequest) and calls `done` exactly once, from a `pool`
  // thread. An iteration already completed answers its stored experiences without calling any summarizer.
  // Otherwise each selected pair whose experience id is stored already is reused, the others are
  // summarized (all at once); "No optimization found" answers are dropped; failed calls become
  // `failures`. The new experiences and, when no call failed, the iteration's completion marker are stored
  // in one atomic write. `added` is every experience of the iteration, reused ones included.
  // Errors: storage errors (UNAVAILABLE, DATA_LOSS, INTERNAL).
  void Run(v1::SummarizeIterationRequest request, Done done);

 private:
  struct Call;
  void Finish(const std::shared_ptr<Call>& call);

  ExperienceStore* store_;
  const SummarizerRegistry* summarizers_;
  MemoryMetrics* metrics_;
  boost::asio::thread_pool* pool_;
  Clock now_;
};

}  // namespace accelopt::memory

// Bounded concurrency for one stage of the search (planner, executor or memory calls): at most `limit`
// calls at once, the rest wait in FIFO order. Reports queue depth and wait time to the metrics.
#pragma once

#include <deque>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "services/orchestrator/orchestrator_metrics.h"

namespace accelopt::orchestrator {

// Not thread-safe: used only from the job engine's event loop.
class StageQueue {
 public:
  // `metrics` may be null.
  StageQueue(std::string stage, int limit, OrchestratorMetrics* metrics)
      : stage_(std::move(stage)), limit_(limit), metrics_(metrics) {}

  // Runs `start` once a slot is free (at once when one is). `start` returns true when it started a call,
  // which then holds the slot until Release(); false (e.g. its job has stopped) frees the slot at once.
  void Enqueue(absl::AnyInvocable<bool() &&> start);
  // A call started by Enqueue has ended.
  void Release();

  int active() const { return active_; }
  int queued() const { return static_cast<int>(waiting_.size()); }

 private:
  struct Waiting {
    absl::AnyInvocable<bool() &&> start;
    absl::Time since;
  };
  void Pump();

  std::string stage_;
  int limit_;
  OrchestratorMetrics* metrics_;
  int active_ = 0;
  bool pumping_ = false;
  std::deque<Waiting> waiting_;
};

}  // namespace accelopt::orchestrator

// In-process fakes of the planner, executor, memory and profiler pool for the job engine's tests and the
// orchestration-overhead benchmark. Kernels are tiny text files whose first line says how the fake
// profiler judges them:
//   "# latency=<ms>"  -> VERDICT_OK with that latency (and peak_percent = 100 * peak_ms / latency when the
//                        profiler's peak_ms is set)
//   "# verdict=<NAME>" -> that verdict (e.g. INCORRECT)
// The default executor derives each child's latency from its parent's by a seeded factor, so a job's search
// is deterministic given its seed.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/orchestrator/agent_clients.h"
#include "services/orchestrator/profiler_pool.h"

namespace accelopt::orchestrator::testing {

// A kernel source the fake profiler times at `latency_ms`; `tag` makes otherwise equal kernels distinct.
std::string FakeKernel(double latency_ms, const std::string& tag = "");
// The latency written in a FakeKernel source, or nullopt.
std::optional<double> FakeLatency(const std::string& source);

// One held call: completes when released or cancelled.
class HeldCalls {
 public:
  // Adds a call; `complete(cancelled)` finishes it exactly once.
  std::shared_ptr<CallHandle> Hold(std::function<void(bool cancelled)> complete);
  // Completes every held call normally, oldest first; returns how many.
  int ReleaseAll();
  // The same, newest first: answers in the reverse of the order the calls were made.
  int ReleaseNewestFirst();
  // Completes the newest held call only; returns whether there was one.
  bool ReleaseNewest();
  int size() const;
  // Calls cancelled through their handle so far.
  int cancelled() const { return cancelled_.load(); }

 private:
  struct Entry;
  int Release(bool newest_first);
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> cancelled_{0};
};

// Answers from `handler` (default: N plans "plan <j>", 100 prompt + 20 completion tokens, $0.001 per call).
class FakePlanner : public PlannerClient {
 public:
  using Handler = std::function<absl::StatusOr<v1::PlanResponse>(const v1::PlanRequest&)>;
  FakePlanner();
  void SetHandler(Handler handler);
  // While set, calls are held until ReleaseAll()/cancel.
  void SetHold(bool hold) { hold_ = hold; }
  HeldCalls& held() { return held_; }
  std::vector<v1::PlanRequest> requests() const;
  int calls() const;
  std::shared_ptr<CallHandle> Plan(v1::PlanRequest request, absl::Duration deadline,
                                   Callback<v1::PlanResponse> done) override;

 private:
  mutable absl::Mutex mu_;
  Handler handler_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> hold_{false};
  HeldCalls held_;
  std::vector<v1::PlanRequest> requests_ ABSL_GUARDED_BY(mu_);
};

// Answers from `handler` (default: K FakeKernels whose latency is the parent's times a factor in
// [0.8, 1.2) drawn from (request seed, sample); 200 prompt + 100 completion tokens, $0.002 per call).
class FakeExecutor : public ExecutorClient {
 public:
  using Handler = std::function<absl::StatusOr<v1::ImplementResponse>(const v1::ImplementRequest&)>;
  FakeExecutor();
  void SetHandler(Handler handler);
  void SetHold(bool hold) { hold_ = hold; }
  HeldCalls& held() { return held_; }
  std::vector<v1::ImplementRequest> requests() const;
  int calls() const;
  std::shared_ptr<CallHandle> Implement(v1::ImplementRequest request, absl::Duration deadline,
                                        Callback<v1::ImplementResponse> done) override;

  static absl::StatusOr<v1::ImplementResponse> DefaultHandler(const v1::ImplementRequest& request);

 private:
  mutable absl::Mutex mu_;
  Handler handler_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> hold_{false};
  HeldCalls held_;
  std::vector<v1::ImplementRequest> requests_ ABSL_GUARDED_BY(mu_);
};

// Keeps experiences per namespace (FIFO); SummarizeIteration adds one per OK sample faster than its parent
// by the positive threshold, at most max_experiences. `fail_summarize` makes SummarizeIteration fail.
class FakeMemory : public MemoryClient {
 public:
  std::shared_ptr<CallHandle> QueryExperiences(v1::QueryExperiencesRequest request, absl::Duration deadline,
                                               Callback<v1::QueryExperiencesResponse> done) override;
  std::shared_ptr<CallHandle> SummarizeIteration(v1::SummarizeIterationRequest request, absl::Duration deadline,
                                                 Callback<v1::SummarizeIterationResponse> done) override;
  std::vector<v1::SummarizeIterationRequest> summarize_requests() const;
  std::vector<v1::Experience> experiences(const std::string& ns) const;
  int queries() const;
  void set_fail_summarize(bool fail) { fail_summarize_ = fail; }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::vector<v1::Experience>> by_namespace_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::SummarizeIterationRequest> summarize_requests_ ABSL_GUARDED_BY(mu_);
  int queries_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> fail_summarize_{false};
};

// A pool of `slots` slots that judges FakeKernels instantly (inline) or holds them.
class FakeProfilerPool : public ProfilerPool {
 public:
  explicit FakeProfilerPool(int slots) : slots_(slots) {}
  int FreeSlots() const override;
  void SetCapacityListener(std::function<void()> listener) override;
  std::shared_ptr<CallHandle> Profile(v1::ProfileRequest request, absl::Duration deadline,
                                      absl::AnyInvocable<void(ProfileOutcome) &&> done) override;

  // Profiles beyond the first `n` answered are held (occupying slots) until ReleaseAll()/cancel.
  void HoldAfter(int n) { hold_after_ = n; }
  HeldCalls& held() { return held_; }
  // Completed executions per candidate id.
  std::map<std::string, int> executions() const;
  int dispatched() const { return dispatched_.load(); }
  // Problem names of the requests, in dispatch order (tells jobs apart in fairness tests).
  std::vector<std::string> dispatch_order() const;
  // When > 0, OK results carry peak_percent = 100 * peak_ms / latency.
  void set_peak_ms(double peak_ms) { peak_ms_ = peak_ms; }
  void set_device_seconds(double s) { device_seconds_ = s; }
  // Every measurement of a kernel after its first reads `factor` times its written latency (a first timing
  // that was lucky, or unlucky).
  void set_repeat_latency_factor(double factor) { repeat_latency_factor_ = factor; }

  v1::ProfileResult Judge(const v1::ProfileRequest& request) const;

 private:
  void Completed(const std::string& candidate_id);

  const int slots_;
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> listener_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> executions_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> hold_after_{1 << 30};
  std::atomic<int> dispatched_{0};
  std::atomic<int> answered_{0};
  HeldCalls held_;
  double peak_ms_ = 0;
  double device_seconds_ = 0.01;
  double repeat_latency_factor_ = 1.0;
  mutable std::map<std::string, int> measured_sources_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::orchestrator::testing

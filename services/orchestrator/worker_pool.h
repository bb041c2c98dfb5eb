// The pool of profiler workers: discovers workers (a static list or a DNS name with many addresses,
// re-resolved periodically), polls each one's slot count, dispatches profiles to free slots, re-dispatches
// a profile elsewhere when its worker fails (bounded attempts), and keeps a failed worker out of rotation
// until it passes a health probe. A worker that refuses a profile with RESOURCE_EXHAUSTED (full, e.g. shared
// with another orchestrator) only pauses: it gets work again as soon as a status poll or one of its results
// shows a free slot, or after a bounded backoff, so the pool can never wedge with idle workers.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "accelopt/v1/profiler_service.pb.h"
#include "services/orchestrator/agent_clients.h"
#include "services/orchestrator/orchestrator_metrics.h"
#include "services/orchestrator/profiler_pool.h"
#include "services/orchestrator/progress_watchdog.h"

namespace accelopt::orchestrator {

// Client of one worker. Every call returns at once and calls `done` exactly once, on any thread (also
// after Cancel, then usually with CANCELLED).
class ProfilerWorker {
 public:
  virtual ~ProfilerWorker() = default;
  virtual std::shared_ptr<CallHandle> Profile(const v1::ProfileRequest& request, absl::Duration deadline,
                                              Callback<v1::ProfileResult> done) = 0;
  virtual std::shared_ptr<CallHandle> GetStatus(absl::Duration deadline, Callback<v1::WorkerStatus> done) = 0;
  // OK when the worker's grpc.health.v1 service reports SERVING.
  virtual std::shared_ptr<CallHandle> CheckHealth(absl::Duration deadline,
                                                  absl::AnyInvocable<void(absl::Status) &&> done) = 0;
};

// Makes the client of the worker at `address` (host:port).
using WorkerFactory = std::function<std::unique_ptr<ProfilerWorker>(const std::string& address)>;
// The workers' current addresses. May block (DNS); called only on the pool's own thread.
using WorkerResolver = std::function<absl::StatusOr<std::vector<std::string>>()>;

struct WorkerPoolOptions {
  // How often slots are polled and failed workers probed.
  absl::Duration poll_interval = absl::Seconds(1);
  // How often the resolver runs.
  absl::Duration resolve_interval = absl::Seconds(30);
  // Workers one profile may be tried on (first try included).
  int max_attempts = 3;
  // Deadline of GetWorkerStatus and health probes.
  absl::Duration probe_deadline = absl::Seconds(5);
  // A worker that answered RESOURCE_EXHAUSTED gets no work until a status poll or a result shows a free
  // slot, or until this backoff passes (doubling per consecutive refusal, up to the max).
  absl::Duration full_backoff_initial = absl::Milliseconds(250);
  absl::Duration full_backoff_max = absl::Seconds(5);
  // The clock (tests inject a fake one).
  std::function<absl::Time()> now = absl::Now;
  // Told the pool's queued profiles, the idle slots workers report, and every dispatch and result. May be
  // null; not owned.
  ProgressWatchdog* watchdog = nullptr;
};

// Thread-safe. Owns one thread for polling and resolving.
class WorkerPool : public ProfilerPool {
 public:
  // `metrics` may be null.
  WorkerPool(WorkerPoolOptions options, WorkerResolver resolver, WorkerFactory factory, OrchestratorMetrics* metrics);
  // Cancels in-flight calls and waits for their completions.
  ~WorkerPool() override;

  // Resolves, polls once, and keeps polling on the pool's thread.
  void Start();
  // One round of what the pool's thread does every poll_interval: resolve when due, lift expired
  // RESOURCE_EXHAUSTED pauses, poll every worker. For tests that drive the pool without Start().
  void RunRound();

  int FreeSlots() const override;
  void SetCapacityListener(std::function<void()> listener) override;
  std::shared_ptr<CallHandle> Profile(v1::ProfileRequest request, absl::Duration deadline,
                                      absl::AnyInvocable<void(ProfileOutcome) &&> done) override;

  // A worker as the pool sees it (for tests, metrics and logs).
  struct WorkerView {
    std::string address;
    int slots = 0;
    int busy = 0;
    bool in_rotation = false;
    // Paused after RESOURCE_EXHAUSTED.
    bool full = false;
  };
  std::vector<WorkerView> Workers() const;

 private:
  struct Worker;
  struct Task;
  class TaskHandle;
  // A profile about to be sent to a worker (started outside the lock).
  struct Launch {
    std::shared_ptr<Task> task;
    ProfilerWorker* client;
    std::string address;
  };

  void Tick();
  void Resolve();
  void ResumeExpiredPauses();
  void OnStatus(const std::string& address, absl::StatusOr<v1::WorkerStatus> status);
  void Poll();
  void DispatchLocked(std::vector<Launch>* launches) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartLaunches(std::vector<Launch> launches);
  void OnResult(const std::shared_ptr<Task>& task, const std::string& address,
                absl::StatusOr<v1::ProfileResult> result);
  void Cancel(const std::shared_ptr<Task>& task);
  void Finish(const std::shared_ptr<Task>& task, absl::StatusOr<v1::ProfileResult> result);
  void MarkFailedLocked(Worker& worker, const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify();
  void UpdateGaugesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TrackProbe(const std::string& address, std::shared_ptr<CallHandle> handle);
  void ProbeDone();

  const WorkerPoolOptions options_;
  WorkerResolver resolver_;
  WorkerFactory factory_;
  OrchestratorMetrics* metrics_;

  mutable absl::Mutex mu_;
  absl::CondVar idle_;
  std::map<std::string, std::unique_ptr<Worker>> workers_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<Task>> waiting_ ABSL_GUARDED_BY(mu_);
  std::set<std::shared_ptr<Task>> running_ ABSL_GUARDED_BY(mu_);
  // The latest probe of each worker (cancelled at shutdown).
  std::map<std::string, std::shared_ptr<CallHandle>> probes_ ABSL_GUARDED_BY(mu_);
  int outstanding_ ABSL_GUARDED_BY(mu_) = 0;  // worker calls whose callback has not run yet
  std::function<void()> listener_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Only touched by the rounds (the pool's thread, or a test calling RunRound).
  absl::Time next_resolve_ = absl::InfinitePast();

  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  std::thread thread_;
};

}  // namespace accelopt::orchestrator

// The pool of profiler workers: discovers workers (a static list or a DNS name with many addresses,
// re-resolved periodically), polls each one's slot count, dispatches profiles to free slots, re-dispatches
// a profile elsewhere when its worker fails (bounded attempts), and keeps a failed worker out of rotation
// until it passes a health probe.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "accelopt/v1/profiler_service.pb.h"
#include "services/orchestrator/agent_clients.h"
#include "services/orchestrator/orchestrator_metrics.h"
#include "services/orchestrator/profiler_pool.h"

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
  void Poll();
  void DispatchLocked(std::vector<Launch>* launches);
  void StartLaunches(std::vector<Launch> launches);
  void OnResult(const std::shared_ptr<Task>& task, const std::string& address,
                absl::StatusOr<v1::ProfileResult> result);
  void Cancel(const std::shared_ptr<Task>& task);
  void Finish(const std::shared_ptr<Task>& task, absl::StatusOr<v1::ProfileResult> result);
  void MarkFailedLocked(Worker& worker, const std::string& why);
  void Notify();
  void UpdateGaugesLocked();
  void TrackProbe(const std::string& address, std::shared_ptr<CallHandle> handle);
  void ProbeDone();

  const WorkerPoolOptions options_;
  WorkerResolver resolver_;
  WorkerFactory factory_;
  OrchestratorMetrics* metrics_;

  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::map<std::string, std::unique_ptr<Worker>> workers_;
  std::deque<std::shared_ptr<Task>> waiting_;
  std::set<std::shared_ptr<Task>> running_;
  // The latest probe of each worker (cancelled at shutdown).
  std::map<std::string, std::shared_ptr<CallHandle>> probes_;
  int outstanding_ = 0;  // worker calls whose callback has not run yet
  std::function<void()> listener_;
  absl::Time next_resolve_ = absl::InfinitePast();
  bool stopping_ = false;

  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  std::thread thread_;
};

}  // namespace accelopt::orchestrator

#include "services/orchestrator/worker_pool.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/core/log.h"

namespace accelopt::orchestrator {
namespace {

// RPC errors that say the worker (not the request) failed: try another worker.
bool IsWorkerFailure(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct WorkerPool::Worker {
  std::string address;
  std::unique_ptr<ProfilerWorker> client;
  // kNew: slots unknown yet; kReady: in rotation; kFailed: out of rotation until a health probe passes.
  enum class State { kNew, kReady, kFailed } state = State::kNew;
  int slots = 0;
  // Profiles this pool has running on the worker.
  int busy = 0;
  // No longer returned by the resolver: gets no new work, forgotten once idle.
  bool gone = false;
  bool probing = false;
  // Refused a profile with RESOURCE_EXHAUSTED: no work until a status poll or a result shows a free slot,
  // or until `full_until`.
  bool full = false;
  absl::Time full_until = absl::InfinitePast();
  // The last pause; doubles per consecutive refusal, zero after a result.
  absl::Duration full_backoff = absl::ZeroDuration();
  // Idle slots the worker itself reported at the last status poll (whoever uses the others).
  int reported_idle = 0;

  bool InRotation() const { return state == State::kReady && !gone && slots > 0; }
  int Free() const { return InRotation() && !full ? std::max(0, slots - busy) : 0; }
  void Resume() {
    full = false;
    full_until = absl::InfinitePast();
  }
};

struct WorkerPool::Task {
  v1::ProfileRequest request;
  absl::Duration deadline;
  absl::AnyInvocable<void(ProfileOutcome) &&> done;
  int attempts = 0;
  int executions = 0;
  int retries = 0;
  bool cancelled = false;
  bool finished = false;
  std::shared_ptr<CallHandle> call;
  std::set<std::string> failed_on;
};

class WorkerPool::TaskHandle : public CallHandle {
 public:
  TaskHandle(WorkerPool* pool, std::weak_ptr<Task> task) : pool_(pool), task_(std::move(task)) {}
  void Cancel() override {
    if (auto task = task_.lock()) pool_->Cancel(task);
  }

 private:
  WorkerPool* pool_;
  std::weak_ptr<Task> task_;
};

WorkerPool::WorkerPool(WorkerPoolOptions options, WorkerResolver resolver, WorkerFactory factory,
                       OrchestratorMetrics* metrics)
    : options_(options), resolver_(std::move(resolver)), factory_(std::move(factory)), metrics_(metrics), timer_(io_) {}

WorkerPool::~WorkerPool() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
  std::vector<std::shared_ptr<CallHandle>> calls;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    listener_ = nullptr;
    for (const auto& task : running_) {
      task->cancelled = true;
      if (task->call) calls.push_back(task->call);
    }
    for (auto& [address, probe] : probes_) calls.push_back(probe);
    waiting_.clear();
  }
  for (auto& call : calls) call->Cancel();
  absl::MutexLock lock(&mu_);
  while (outstanding_ != 0) idle_.Wait(&mu_);
}

void WorkerPool::Start() {
  boost::asio::post(io_, [this] { Tick(); });
  thread_ = std::thread([this] {
    auto guard = boost::asio::make_work_guard(io_);
    io_.run();
  });
}

void WorkerPool::Tick() {
  RunRound();
  timer_.expires_after(absl::ToChronoMilliseconds(options_.poll_interval));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Tick();
  });
}

void WorkerPool::RunRound() {
  if (options_.now() >= next_resolve_) {
    Resolve();
    next_resolve_ = options_.now() + options_.resolve_interval;
  }
  ResumeExpiredPauses();
  Poll();
}

void WorkerPool::ResumeExpiredPauses() {
  std::vector<Launch> launches;
  bool resumed = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    const absl::Time now = options_.now();
    for (auto& [address, w] : workers_) {
      if (w->full && now >= w->full_until) {
        w->Resume();
        resumed = true;
      }
    }
    if (!resumed) return;
    DispatchLocked(&launches);
  }
  StartLaunches(std::move(launches));
  Notify();
}

void WorkerPool::Resolve() {
  auto addresses = resolver_();
  if (!addresses.ok()) {
    // Keep the last known workers: a DNS hiccup must not empty the pool.
    ACCELOPT_LOG(WARNING) << "cannot resolve profiler workers: " << addresses.status().message();
    return;
  }
  std::set<std::string> current(addresses->begin(), addresses->end());
  absl::MutexLock lock(&mu_);
  for (const std::string& address : current) {
    auto it = workers_.find(address);
    if (it == workers_.end()) {
      auto worker = std::make_unique<Worker>();
      worker->address = address;
      worker->client = factory_(address);
      workers_[address] = std::move(worker);
      ACCELOPT_LOG(INFO).With("worker", address) << "profiler worker discovered";
    } else if (it->second->gone) {
      it->second->gone = false;
    }
  }
  for (auto& [address, worker] : workers_) {
    if (current.count(address) == 0 && !worker->gone) {
      worker->gone = true;
      ACCELOPT_LOG(INFO).With("worker", address) << "profiler worker no longer resolved";
    }
  }
  UpdateGaugesLocked();
}

void WorkerPool::Poll() {
  struct Probe {
    Worker* worker;
    bool health;
  };
  std::vector<Probe> probes;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      Worker& w = *it->second;
      if (w.gone && w.busy == 0 && !w.probing) {
        probes_.erase(w.address);
        it = workers_.erase(it);
        continue;
      }
      if (!w.gone && !w.probing) {
        w.probing = true;
        ++outstanding_;
        probes.push_back({&w, w.state == Worker::State::kFailed});
      }
      ++it;
    }
  }
  // Workers are erased only on this thread and only when not probing, so the pointers stay valid.
  for (const Probe& p : probes) {
    const std::string address = p.worker->address;
    if (p.health) {
      TrackProbe(address, p.worker->client->CheckHealth(options_.probe_deadline, [this, address](absl::Status s) {
        {
          absl::MutexLock lock(&mu_);
          auto it = workers_.find(address);
          if (it != workers_.end()) {
            it->second->probing = false;
            if (s.ok() && it->second->state == Worker::State::kFailed) {
              it->second->state = Worker::State::kNew;
              ACCELOPT_LOG(INFO).With("worker", address) << "profiler worker passed its health probe";
            }
          }
        }
        ProbeDone();
      }));
    } else {
      TrackProbe(address, p.worker->client->GetStatus(options_.probe_deadline,
                                                      [this, address](absl::StatusOr<v1::WorkerStatus> status) {
                                                        OnStatus(address, std::move(status));
                                                      }));
    }
  }
}

void WorkerPool::OnStatus(const std::string& address, absl::StatusOr<v1::WorkerStatus> status) {
  std::vector<Launch> launches;
  {
    absl::MutexLock lock(&mu_);
    auto it = workers_.find(address);
    if (it != workers_.end()) {
      Worker& w = *it->second;
      w.probing = false;
      if (status.ok()) {
        if (w.state != Worker::State::kFailed) w.state = Worker::State::kReady;
        w.slots = status->slots();
        w.reported_idle = std::max(0, status->slots() - status->busy_slots() - status->queued());
        if (w.full && w.reported_idle > 0) w.Resume();
      } else if (w.state != Worker::State::kFailed && !stopping_) {
        MarkFailedLocked(w, std::string(status.status().message()));
      }
    }
    if (!stopping_) DispatchLocked(&launches);
    UpdateGaugesLocked();
  }
  StartLaunches(std::move(launches));
  Notify();
  ProbeDone();
}

void WorkerPool::TrackProbe(const std::string& address, std::shared_ptr<CallHandle> handle) {
  absl::MutexLock lock(&mu_);
  probes_[address] = std::move(handle);
}

void WorkerPool::ProbeDone() {
  absl::MutexLock lock(&mu_);
  if (--outstanding_ == 0) idle_.SignalAll();
}

int WorkerPool::FreeSlots() const {
  absl::MutexLock lock(&mu_);
  int free = 0;
  for (const auto& [address, w] : workers_) free += w->Free();
  return free - static_cast<int>(waiting_.size());
}

void WorkerPool::SetCapacityListener(std::function<void()> listener) {
  absl::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

std::shared_ptr<CallHandle> WorkerPool::Profile(v1::ProfileRequest request, absl::Duration deadline,
                                                absl::AnyInvocable<void(ProfileOutcome) &&> done) {
  auto task = std::make_shared<Task>();
  task->request = std::move(request);
  task->deadline = deadline;
  task->done = std::move(done);
  std::vector<Launch> launches;
  {
    absl::MutexLock lock(&mu_);
    running_.insert(task);
    waiting_.push_back(task);
    DispatchLocked(&launches);
  }
  StartLaunches(std::move(launches));
  return std::make_shared<TaskHandle>(this, task);
}

void WorkerPool::DispatchLocked(std::vector<Launch>* launches) {
  while (!waiting_.empty()) {
    std::shared_ptr<Task> task = waiting_.front();
    // The worker with the most free slots, preferring one this task has not failed on.
    Worker* best = nullptr;
    for (auto& [address, w] : workers_) {
      if (w->Free() == 0) continue;
      const bool fresh = task->failed_on.count(address) == 0;
      if (best == nullptr) {
        best = w.get();
        continue;
      }
      const bool best_fresh = task->failed_on.count(best->address) == 0;
      if ((fresh && !best_fresh) || (fresh == best_fresh && w->Free() > best->Free())) best = w.get();
    }
    if (best == nullptr) break;
    waiting_.pop_front();
    ++best->busy;
    ++task->attempts;
    ++outstanding_;
    launches->push_back({task, best->client.get(), best->address});
    if (options_.watchdog != nullptr) options_.watchdog->ReportProgress();
  }
  UpdateGaugesLocked();
}

void WorkerPool::StartLaunches(std::vector<Launch> launches) {
  for (Launch& l : launches) {
    std::shared_ptr<Task> task = l.task;
    const std::string address = l.address;
    std::shared_ptr<CallHandle> call = l.client->Profile(
        task->request, task->deadline,
        [this, task, address](absl::StatusOr<v1::ProfileResult> r) { OnResult(task, address, std::move(r)); });
    bool cancel = false;
    {
      absl::MutexLock lock(&mu_);
      if (!task->finished) task->call = call;
      cancel = task->cancelled;
    }
    if (cancel) call->Cancel();
  }
}

void WorkerPool::OnResult(const std::shared_ptr<Task>& task, const std::string& address,
                          absl::StatusOr<v1::ProfileResult> result) {
  std::vector<Launch> launches;
  bool final = true;
  {
    absl::MutexLock lock(&mu_);
    --outstanding_;
    task->call = nullptr;
    auto it = workers_.find(address);
    Worker* worker = it == workers_.end() ? nullptr : it->second.get();
    if (worker != nullptr) --worker->busy;
    const bool refused = !task->cancelled && absl::IsResourceExhausted(result.status());
    if (worker != nullptr && !refused) {
      // The worker finished (or dropped) a profile: it has a free slot now.
      worker->Resume();
      worker->full_backoff = absl::ZeroDuration();
      if (options_.watchdog != nullptr) options_.watchdog->ReportProgress();
    }
    if (task->cancelled) {
      result = absl::CancelledError("the profile was cancelled");
    } else if (result.ok()) {
      ++task->executions;
      if (result->verdict() == v1::VERDICT_INFRA_ERROR) {
        if (worker != nullptr) MarkFailedLocked(*worker, absl::StrCat("INFRA_ERROR: ", result->message()));
        final = task->attempts >= options_.max_attempts;
      }
    } else if (absl::IsResourceExhausted(result.status())) {
      // The worker is full (perhaps shared with another orchestrator): not a failure, try again later.
      // Pause the worker until it shows a free slot, or for a bounded backoff.
      --task->attempts;
      if (worker != nullptr) {
        worker->full = true;
        worker->full_backoff = worker->full_backoff == absl::ZeroDuration()
                                   ? options_.full_backoff_initial
                                   : std::min(2 * worker->full_backoff, options_.full_backoff_max);
        worker->full_until = options_.now() + worker->full_backoff;
      }
      final = false;
    } else if (IsWorkerFailure(result.status())) {
      if (worker != nullptr) MarkFailedLocked(*worker, std::string(result.status().message()));
      final = task->attempts >= options_.max_attempts;
    }
    if (!final && !stopping_) {
      if (!refused) {
        ++task->retries;
        task->failed_on.insert(address);
      }
      waiting_.push_front(task);
    }
    if (!stopping_) DispatchLocked(&launches);
    if (outstanding_ == 0) idle_.SignalAll();
    if (stopping_) final = true;
  }
  if (final) Finish(task, std::move(result));
  StartLaunches(std::move(launches));
  Notify();
}

void WorkerPool::Cancel(const std::shared_ptr<Task>& task) {
  std::shared_ptr<CallHandle> call;
  bool was_waiting = false;
  {
    absl::MutexLock lock(&mu_);
    if (task->finished || task->cancelled) return;
    task->cancelled = true;
    auto it = std::find(waiting_.begin(), waiting_.end(), task);
    if (it != waiting_.end()) {
      waiting_.erase(it);
      was_waiting = true;
      UpdateGaugesLocked();
    }
    call = task->call;
  }
  if (was_waiting) {
    Finish(task, absl::CancelledError("the profile was cancelled"));
    Notify();
  } else if (call) {
    call->Cancel();
  }
}

void WorkerPool::Finish(const std::shared_ptr<Task>& task, absl::StatusOr<v1::ProfileResult> result) {
  ProfileOutcome outcome;
  {
    absl::MutexLock lock(&mu_);
    if (task->finished) return;
    task->finished = true;
    running_.erase(task);
    outcome.executions = task->executions;
    outcome.retries = task->retries;
  }
  outcome.result = std::move(result);
  std::move(task->done)(std::move(outcome));
}

void WorkerPool::MarkFailedLocked(Worker& worker, const std::string& why) {
  if (worker.state == Worker::State::kFailed) return;
  worker.state = Worker::State::kFailed;
  ACCELOPT_LOG(WARNING).With("worker", worker.address) << "profiler worker out of rotation: " << why;
  UpdateGaugesLocked();
}

void WorkerPool::Notify() {
  std::function<void()> listener;
  {
    absl::MutexLock lock(&mu_);
    listener = listener_;
  }
  if (listener) listener();
}

void WorkerPool::UpdateGaugesLocked() {
  int busy = 0, free = 0, reported_idle = 0, in_rotation = 0;
  for (const auto& [address, w] : workers_) {
    busy += w->busy;
    free += w->Free();
    if (w->InRotation()) {
      reported_idle += w->reported_idle;
      ++in_rotation;
    }
  }
  if (options_.watchdog != nullptr) {
    options_.watchdog->ReportLoad(static_cast<int>(waiting_.size()), reported_idle, in_rotation);
  }
  if (metrics_ == nullptr) return;
  metrics_->slots_busy.Set(busy);
  metrics_->slots_free.Set(free);
}

std::vector<WorkerPool::WorkerView> WorkerPool::Workers() const {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerView> views;
  for (const auto& [address, w] : workers_) views.push_back({address, w->slots, w->busy, w->InRotation(), w->full});
  return views;
}

}  // namespace accelopt::orchestrator

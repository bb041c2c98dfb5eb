// Benchmarks of the orchestrator's job engine (docs/orchestrator.md has the numbers):
//   BM_OverheadPerCandidate   orchestrator CPU per candidate with instant fake agents and profiler
//   BM_PaperIteration         a paper-preset iteration (B=6, N=12, K=2) over 8 fake workers with realistic
//                             (scaled) LLM and profile latencies: profiler-slot utilization while profiles
//                             are queued, and wall time
//   BM_StageByStage           the same work done as the reference code does it: all plans, then all
//                             implementations, then every profile one after another
#include <benchmark/benchmark.h>
#include <time.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "libs/storage/kv_store.h"
#include "prometheus/registry.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/testing/fake_clients.h"
#include "services/orchestrator/worker_pool.h"

namespace accelopt::orchestrator {
namespace {

using testing::FakeExecutor;
using testing::FakeKernel;
using testing::FakeMemory;
using testing::FakePlanner;
using testing::FakeProfilerPool;

// Simulated latencies, scaled down 100x from typical real ones (30 s plan call, 20 s implementation,
// 5 s profile); each call draws uniformly from [0.5, 1.5) of its base.
constexpr double kPlanMs = 300;
constexpr double kImplementMs = 200;
constexpr double kProfileMs = 50;
constexpr int kWorkers = 8;

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string FreshDir(const std::string& name) {
  // tmpfs when available: the benchmark measures CPU, not the disk's fsync latency.
  const std::string root =
      std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
  std::string dir = absl::StrCat(root, "/accelopt_orchestrator_bench_", name, "_", getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

v1::JobSpec PaperSpec(int iterations) {
  v1::JobSpec spec;
  spec.set_preset("paper");
  spec.set_seed(1);
  spec.mutable_problem()->set_name("bench");
  spec.mutable_problem()->set_reference_source("def forward(x): return x\n");
  spec.mutable_baseline()->set_source(FakeKernel(1.0, "baseline"));
  spec.mutable_search()->set_iterations(iterations);
  return spec;
}

// Runs closures after a delay on one thread.
class DelayLine {
 public:
  DelayLine()
      : thread_([this] {
          auto guard = boost::asio::make_work_guard(io_);
          io_.run();
        }) {}
  ~DelayLine() {
    io_.stop();
    thread_.join();
  }
  void After(double ms, std::function<void()> fn) {
    boost::asio::post(io_, [this, ms, fn = std::move(fn)] {
      auto timer = std::make_shared<boost::asio::steady_timer>(io_);
      timer->expires_after(std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
      timer->async_wait([timer, fn](const boost::system::error_code&) { fn(); });
    });
  }
  // A latency drawn from [0.5, 1.5) x base.
  double Draw(double base) {
    std::lock_guard<std::mutex> lock(mu_);
    return base * std::uniform_real_distribution<double>(0.5, 1.5)(rng_);
  }

 private:
  boost::asio::io_context io_;
  std::thread thread_;
  std::mutex mu_;
  std::mt19937_64 rng_{42};
};

class NoopHandle : public CallHandle {
 public:
  void Cancel() override {}
};

// Agents answering like the fakes, after a simulated latency.
class SlowPlanner : public PlannerClient {
 public:
  explicit SlowPlanner(DelayLine* line) : line_(line) {}
  std::shared_ptr<CallHandle> Plan(v1::PlanRequest request, absl::Duration, Callback<v1::PlanResponse> done) override {
    auto shared = std::make_shared<Callback<v1::PlanResponse>>(std::move(done));
    line_->After(line_->Draw(kPlanMs), [request, shared] {
      FakePlanner fake;
      auto response = std::make_shared<absl::StatusOr<v1::PlanResponse>>();
      fake.Plan(request, absl::ZeroDuration(), [response](absl::StatusOr<v1::PlanResponse> r) { *response = r; });
      std::move (*shared)(*response);
    });
    return std::make_shared<NoopHandle>();
  }

 private:
  DelayLine* line_;
};

class SlowExecutor : public ExecutorClient {
 public:
  explicit SlowExecutor(DelayLine* line) : line_(line) {}
  std::shared_ptr<CallHandle> Implement(v1::ImplementRequest request, absl::Duration,
                                        Callback<v1::ImplementResponse> done) override {
    auto shared = std::make_shared<Callback<v1::ImplementResponse>>(std::move(done));
    line_->After(line_->Draw(kImplementMs),
                 [request, shared] { std::move (*shared)(FakeExecutor::DefaultHandler(request)); });
    return std::make_shared<NoopHandle>();
  }

 private:
  DelayLine* line_;
};

// A one-slot worker whose profiles take a simulated time.
class SlowWorker : public ProfilerWorker {
 public:
  explicit SlowWorker(DelayLine* line) : line_(line) {}
  std::shared_ptr<CallHandle> Profile(const v1::ProfileRequest& request, absl::Duration,
                                      Callback<v1::ProfileResult> done) override {
    auto shared = std::make_shared<Callback<v1::ProfileResult>>(std::move(done));
    line_->After(line_->Draw(kProfileMs), [request, shared] {
      FakeProfilerPool judge(1);
      std::move (*shared)(judge.Judge(request));
    });
    return std::make_shared<NoopHandle>();
  }
  std::shared_ptr<CallHandle> GetStatus(absl::Duration, Callback<v1::WorkerStatus> done) override {
    v1::WorkerStatus status;
    status.set_slots(1);
    std::move(done)(status);
    return std::make_shared<NoopHandle>();
  }
  std::shared_ptr<CallHandle> CheckHealth(absl::Duration, absl::AnyInvocable<void(absl::Status) &&> done) override {
    std::move(done)(absl::OkStatus());
    return std::make_shared<NoopHandle>();
  }

 private:
  DelayLine* line_;
};

v1::Job WaitFinished(JobEngine& engine, const std::string& id) {
  for (;;) {
    std::promise<absl::StatusOr<v1::Job>> p;
    engine.GetJob(id, [&p](absl::StatusOr<v1::Job> j) { p.set_value(std::move(j)); });
    v1::Job job = p.get_future().get().value();
    if (job.state() != v1::JOB_STATE_RUNNING && job.state() != v1::JOB_STATE_QUEUED) return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string Submit(JobEngine& engine, const v1::JobSpec& spec) {
  std::promise<absl::StatusOr<v1::SubmitJobResponse>> p;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  engine.SubmitJob(request, [&p](absl::StatusOr<v1::SubmitJobResponse> r) { p.set_value(std::move(r)); });
  return p.get_future().get().value().job().job_id();
}

int64_t CountCandidates(const v1::Job& job) {
  int64_t n = 0;
  for (const auto& [verdict, count] : job.candidates()) n += count;
  return n;
}

void BM_OverheadPerCandidate(benchmark::State& state) {
  const std::string dir = FreshDir("overhead");
  auto kv = storage::KvStore::Open(dir, JobStoreFamilies()).value();
  JobStore store(kv.get());
  FakePlanner planner;
  FakeExecutor executor;
  FakeMemory memory;
  FakeProfilerPool pool(64);
  JobEngine engine({}, &store, {&planner, &executor, &memory, &pool}, nullptr);
  (void)engine.Start();
  int64_t candidates = 0;
  double cpu = 0;
  for (auto _ : state) {
    const double cpu_before = ProcessCpuSeconds();
    v1::Job job = WaitFinished(engine, Submit(engine, PaperSpec(2)));
    cpu += ProcessCpuSeconds() - cpu_before;
    candidates += CountCandidates(job);
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["cpu_ms_per_candidate"] = 1000.0 * cpu / static_cast<double>(candidates);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_OverheadPerCandidate)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PaperIteration(benchmark::State& state) {
  for (auto _ : state) {
    const std::string dir = FreshDir("paper");
    auto kv = storage::KvStore::Open(dir, JobStoreFamilies()).value();
    JobStore store(kv.get());
    DelayLine line;
    SlowPlanner planner(&line);
    SlowExecutor executor(&line);
    FakeMemory memory;
    auto registry = std::make_shared<prometheus::Registry>();
    auto metrics = OrchestratorMetrics::Create(*registry);
    std::vector<std::string> addresses;
    for (int i = 0; i < kWorkers; ++i) addresses.push_back(absl::StrCat("worker-", i, ":1"));
    WorkerPoolOptions pool_options;
    pool_options.poll_interval = absl::Milliseconds(50);
    WorkerPool pool(
        pool_options, [addresses]() -> absl::StatusOr<std::vector<std::string>> { return addresses; },
        [&line](const std::string&) { return std::make_unique<SlowWorker>(&line); }, &metrics);
    pool.Start();
    while (pool.FreeSlots() < kWorkers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    JobEngine engine({}, &store, {&planner, &executor, &memory, &pool}, &metrics);
    (void)engine.Start();

    // Iteration 1 expands the baseline (24 kernels); iteration 2 is a full paper iteration (6 x 12 x 2).
    const auto start = std::chrono::steady_clock::now();
    const std::string id = Submit(engine, PaperSpec(2));
    std::atomic<bool> done{false};
    int64_t queued_samples = 0;
    double busy_fraction_sum = 0;
    std::thread sampler([&] {
      auto& depth = metrics.queue_depth.Add({{"stage", kStageProfile}});
      while (!done) {
        int busy = 0;
        for (const auto& w : pool.Workers()) busy += w.busy;
        if (depth.Value() > 0) {
          ++queued_samples;
          busy_fraction_sum += static_cast<double>(busy) / kWorkers;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    v1::Job job = WaitFinished(engine, id);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done = true;
    sampler.join();
    state.SetIterationTime(wall);
    state.counters["candidates"] = static_cast<double>(CountCandidates(job));
    state.counters["busy_while_queued_pct"] =
        queued_samples > 0 ? 100.0 * busy_fraction_sum / static_cast<double>(queued_samples) : 100.0;
    state.counters["queued_samples"] = static_cast<double>(queued_samples);
    state.counters["wall_s"] = wall;
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_PaperIteration)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// The reference's stage-by-stage schedule for the same two iterations and latencies: every planner call of
// the iteration (concurrently, at most 16), then every executor call (at most 32), then each kernel
// profiled one after another on one device (the reference has one NeuronCore per task); with
// `workers` > 1 the profiles of each stage still wait for all LLM work but are spread over the workers.
double StageByStageSeconds(DelayLine& line, int workers) {
  auto run_wave = [&line](int calls, int concurrency, double base_ms) {
    // Runs `calls` simulated calls with at most `concurrency` at once; returns when all finished.
    std::promise<void> all_done;
    std::atomic<int> started{0}, finished{0};
    std::function<void()> start_next;
    start_next = [&] {
      const int i = started.fetch_add(1);
      if (i >= calls) return;
      line.After(line.Draw(base_ms), [&] {
        if (finished.fetch_add(1) + 1 == calls) {
          all_done.set_value();
        } else {
          start_next();
        }
      });
    };
    for (int i = 0; i < std::min(calls, concurrency); ++i) start_next();
    all_done.get_future().wait();
  };
  const auto start = std::chrono::steady_clock::now();
  run_wave(1, 1, kProfileMs);  // baseline profile
  for (int parents : {1, 6}) {
    run_wave(parents, 16, kPlanMs);
    run_wave(parents * 12, 32, kImplementMs);
    run_wave(parents * 12 * 2, workers, kProfileMs);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_StageByStage(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  for (auto _ : state) {
    DelayLine line;
    const double wall = StageByStageSeconds(line, workers);
    state.SetIterationTime(wall);
    state.counters["wall_s"] = wall;
  }
}
BENCHMARK(BM_StageByStage)->Arg(1)->Arg(kWorkers)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace accelopt::orchestrator

BENCHMARK_MAIN();

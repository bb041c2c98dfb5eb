// Helpers shared by the job engine's tests: waiting for an asynchronous engine call, polling a condition,
// and small job specs the fakes (fake_clients.h) can run.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "accelopt/v1/job.pb.h"
#include "services/orchestrator/agent_clients.h"
#include "services/orchestrator/testing/fake_clients.h"

namespace accelopt::orchestrator::testing {

// Calls `call` with a callback and waits for its result.
template <typename T>
absl::StatusOr<T> Await(const std::function<void(Callback<T>)>& call) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<T>>>();
  auto future = promise->get_future();
  call([promise](absl::StatusOr<T> result) { promise->set_value(std::move(result)); });
  return future.get();
}

// Polls `condition` every 5 ms until it holds or `timeout` passes.
inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

inline bool Finished(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_SUCCEEDED || job.state() == v1::JOB_STATE_FAILED ||
         job.state() == v1::JOB_STATE_CANCELLED;
}

// A job of `iterations` x beam x plans x samples over the fake problem, with a 1 ms FakeKernel baseline.
inline v1::JobSpec Spec(int iterations, int beam, int plans, int samples, uint64_t seed = 7) {
  v1::JobSpec spec;
  spec.set_name("test");
  spec.set_preset("small");
  spec.set_seed(seed);
  spec.mutable_problem()->set_name("fake");
  spec.mutable_problem()->set_reference_source("def forward(x): return x\n");
  spec.mutable_baseline()->set_source(FakeKernel(1.0, "baseline"));
  spec.mutable_search()->set_iterations(iterations);
  spec.mutable_search()->set_beam_width(beam);
  spec.mutable_search()->set_plans_per_candidate(plans);
  spec.mutable_search()->set_samples_per_plan(samples);
  return spec;
}

}  // namespace accelopt::orchestrator::testing

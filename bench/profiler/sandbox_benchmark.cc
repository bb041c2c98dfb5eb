// Sandbox start-up cost per profile: the bubblewrap sandbox around a no-op program and around a Python start
// that imports numpy (what every profile pays before the harness does real work), and a whole profile of a
// tiny kernel through the harness and timing model.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "libs/core/file.h"
#include "libs/sandbox/sandbox.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/kernel_profiler.h"

namespace accelopt::profiler {
namespace {

using sandbox::RunInSandbox;
using sandbox::SandboxSpec;

std::string Scratch() {
  std::string dir = "/tmp/sandbox_benchmark_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

void RunSandboxed(benchmark::State& state, std::vector<std::string> argv, bool use_bwrap) {
  SandboxSpec spec;
  spec.argv = std::move(argv);
  spec.scratch_dir = Scratch();
  spec.env = {{"PATH", "/usr/bin"}, {"OPENBLAS_NUM_THREADS", "1"}};
  spec.use_bwrap = use_bwrap;
  for (auto _ : state) {
    auto outcome = RunInSandbox(spec, nullptr);
    if (!outcome.ok() || outcome->exit_code != 0) state.SkipWithError("sandboxed program failed");
  }
}

void BM_BwrapTrue(benchmark::State& state) { RunSandboxed(state, {"/usr/bin/true"}, true); }
void BM_PlainTrue(benchmark::State& state) { RunSandboxed(state, {"/usr/bin/true"}, false); }
void BM_BwrapPythonNumpy(benchmark::State& state) {
  RunSandboxed(state, {"/usr/bin/python3", "-c", "import numpy"}, true);
}
void BM_PlainPythonNumpy(benchmark::State& state) {
  RunSandboxed(state, {"/usr/bin/python3", "-c", "import numpy"}, false);
}

void BM_WholeProfileOfTinyKernel(benchmark::State& state) {
  const std::string dir = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/double/";
  KernelProfilerOptions options;
  options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/harness";
  v1::Problem problem;
  problem.set_reference_source(*core::ReadFile(dir + "reference.py"));
  problem.set_metadata_yaml(*core::ReadFile(dir + "problem.yaml"));
  v1::Kernel kernel;
  kernel.set_source(*core::ReadFile(dir + "kernel.py"));
  v1::ProfileOptions profile_options;
  profile_options.set_seeds(1);
  KernelProfiler profiler(options, *BuiltinBackends().Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig()));
  for (auto _ : state) {
    if (profiler.Profile(kernel, problem, profile_options, 0, nullptr).verdict() != v1::VERDICT_OK) {
      state.SkipWithError("profile failed");
    }
  }
}

BENCHMARK(BM_PlainTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BwrapTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlainPythonNumpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BwrapPythonNumpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WholeProfileOfTinyKernel)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace accelopt::profiler

BENCHMARK_MAIN();

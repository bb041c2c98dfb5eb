// Sandbox start-up cost per profile: the bubblewrap sandbox around a no-op program and around a Python start
// that imports numpy (what every profile pays before the harness does real work), a whole profile of a tiny
// kernel through the harness and timing model, and a whole timing-only profile of an 85k-instruction kernel (the
// size of NKIBench's largest), whose two protocol steps overlap (docs/profiler.md).
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "libs/core/file.h"
#include "libs/sandbox/sandbox.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/kernel_profiler.h"

namespace accelopt::profiler {
namespace {

using sandbox::RunInSandbox;
using sandbox::SandboxSpec;

// The scratch directory of one benchmark, under $TMPDIR (else /tmp), removed when the benchmark ends.
class Scratch {
 public:
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sandbox_benchmark_XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr && chmod(tmpl.c_str(), 0755) == 0) path_ = tmpl;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void RunSandboxed(benchmark::State& state, std::vector<std::string> argv, bool use_bwrap) {
  Scratch scratch;
  SandboxSpec spec;
  spec.argv = std::move(argv);
  spec.scratch_dir = scratch.path();
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

// Profiles the kernel.py of `dir` against its reference.py and problem.yaml in the real sandbox.
void ProfileRepeatedly(benchmark::State& state, const std::string& dir, bool timing_only) {
  KernelProfilerOptions options;
  options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/harness";
  v1::Problem problem;
  problem.set_reference_source(*core::ReadFile(dir + "reference.py"));
  problem.set_metadata_yaml(*core::ReadFile(dir + "problem.yaml"));
  v1::Kernel kernel;
  kernel.set_source(*core::ReadFile(dir + "kernel.py"));
  v1::ProfileOptions profile_options;
  profile_options.set_seeds(1);
  profile_options.set_timing_only(timing_only);
  KernelProfiler profiler(options, *BuiltinBackends().Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig()));
  for (auto _ : state) {
    v1::ProfileResult result = profiler.Profile(kernel, problem, profile_options, 0, nullptr);
    if (result.verdict() != v1::VERDICT_OK) state.SkipWithError(("profile failed: " + result.message()).c_str());
    state.counters["device_seconds"] = result.device_seconds();
  }
}

void BM_WholeProfileOfTinyKernel(benchmark::State& state) {
  ProfileRepeatedly(state, ACCELOPT_SOURCE_DIR "/services/profiler/testdata/double/", /*timing_only=*/false);
}

void BM_TimingOnlyProfileOf85kInstructions(benchmark::State& state) {
  ProfileRepeatedly(state, ACCELOPT_SOURCE_DIR "/bench/profiler/testdata/many_instructions/", /*timing_only=*/true);
}

BENCHMARK(BM_PlainTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BwrapTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlainPythonNumpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BwrapPythonNumpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WholeProfileOfTinyKernel)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TimingOnlyProfileOf85kInstructions)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace accelopt::profiler

BENCHMARK_MAIN();

// A device backend: what a profiler worker needs to know about one device. KernelProfiler writes the problem
// and kernel into a scratch directory, runs the backend's runner in the sandbox under the harness guard, maps
// the sandbox's outcome and the harness result to a verdict, and asks the backend to measure an OK run.
//
// Backends are created through the registry (backend_registry.h); adding one is described in docs/profiler.md,
// "Adding a backend". Implementations must be thread-safe: Profile() runs concurrently on every worker slot.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "accelopt/v1/common.pb.h"
#include "libs/sandbox/sandbox.h"
#include "services/profiler/harness_result.h"

namespace accelopt::profiler {

// Where one profile's files are, as the program inside the sandbox sees them.
struct RunPaths {
  std::string harness;  // the harness directory (/harness when sandboxed)
  std::string work;     // the scratch directory (/scratch when sandboxed)
};

// The backend's part of the sandboxed run. KernelProfiler runs
//   python <harness>/harness_guard.py <work>/kernel.py <harness>/<runner> --problem ... --kernel ...
//     --metadata ... --result-out <work>/result.json --seeds N <args...> [--timing-only] [--ban-low-precision]
//     [--tolerance T]
// with the common environment (PATH, HOME, Python and BLAS settings) plus `env`, and `device_binds` passed
// through into the sandbox.
struct BackendRunner {
  std::string runner;  // a file in the harness directory, e.g. "run_kernel.py"
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> device_binds;
  // The files (relative to the scratch directory) the run may write back to the host; the rest of /scratch is
  // a size-limited tmpfs (libs/sandbox). Empty: the host scratch directory is bound read-write (trusted runners
  // that write whole directories only).
  std::vector<std::string> output_files;
  // When set, a file in the harness directory that replays the kernel's recorded program in a second, fresh
  // sandbox (docs/adr/0009-trusted-replay.md): the runner then only records, and only this replay's result
  // and trace are read. Empty: the runner's own result is read.
  std::string replay_runner;
};

// What a backend measures from: a finished sandboxed run whose harness verdict is OK.
struct MeasureInput {
  const HarnessResult& harness;
  const v1::ProfileOptions& options;
  // Roofline terms of the problem (given with it, else derived by the harness); absent when unknown.
  std::optional<v1::Roofline> roofline;
  // The run that produced the outputs, for backends that run again (e.g. more timing rounds).
  const sandbox::SandboxSpec& run;
  // The scratch directory on the host, holding the run's outputs.
  std::string scratch;
  // Becomes true when the caller cancels; may be null.
  const std::atomic<bool>* cancel;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual v1::Device device() const = 0;
  // The device's name in the CLI and in results, e.g. "sim-trn1".
  virtual std::string name() const = 0;
  // Reported as ProfileResult.backend_version and WorkerStatus.backend_version.
  virtual std::string version() const = 0;

  // Start-up checks of this backend's own needs (the sandbox, harness and interpreter are checked by
  // KernelProfiler::CheckReady). FAILED_PRECONDITION naming the config field and what is missing.
  virtual absl::Status CheckReady() const = 0;

  // What runs in the sandbox for one profile.
  virtual BackendRunner Runner(const RunPaths& paths) const = 0;

  // Fills latency, counters, engine activity and percentage of peak of an OK run into `result` (which already
  // holds the harness's verdict and correctness fields). A non-OK status turns the result into INFRA_ERROR
  // with the status's message.
  virtual absl::Status Measure(const MeasureInput& input, v1::ProfileResult* result) const = 0;
};

}  // namespace accelopt::profiler

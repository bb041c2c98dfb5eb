// Checks and times one kernel on the simulator: writes the problem and kernel into a private scratch
// directory, runs the Python harness (correctness protocol + instruction trace) in the sandbox, and schedules
// the trace on the Trainium timing model. Every outcome is a ProfileResult verdict; nothing here throws.
//
// Thread-safe: Profile() may run concurrently (one call per worker slot).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "accelopt/v1/common.pb.h"
#include "libs/sandbox/sandbox.h"

namespace accelopt::profiler {

struct KernelProfilerOptions {
  v1::Device device = v1::DEVICE_SIM_TRN1;
  std::string python = "/usr/bin/python3";
  // Directory holding run_kernel.py, harness_guard.py and the NKI simulator (bound read-only at /harness).
  std::string harness_dir;
  // Parent of the per-profile scratch directories.
  std::string scratch_root = "/tmp";
  sandbox::SandboxLimits limits;
  bool use_bwrap = true;
  // Slot n's sandbox runs as uid sandbox_uid_base + n (a range this process holds, see libs/sandbox/uid_range.h).
  int sandbox_uid_base = 60000;
  std::string bwrap = "bwrap";
  double default_timeout_seconds = 300;
  // Identifies results, e.g. the worker's address.
  std::string worker_name;
  // `neuron` backend: the neuron-profile binary, the NeuronCore to pin, and the device files passed into the
  // sandbox (default: every /dev/neuron* present at start-up).
  std::string neuron_profile_bin = "neuron-profile";
  int neuron_core = 0;
  std::vector<std::string> neuron_devices;
};

class KernelProfiler {
 public:
  explicit KernelProfiler(KernelProfilerOptions options);

  // `slot` selects the sandbox user (so process limits are per slot). `cancel` may be null.
  v1::ProfileResult Profile(const v1::Kernel& kernel, const v1::Problem& problem, const v1::ProfileOptions& options,
                            int slot, const std::atomic<bool>* cancel) const;

  const KernelProfilerOptions& options() const { return options_; }

 private:
  // `neuron` backend: the latency protocol over the NTFF traces the runner saved (neuron_backend.cc).
  void MeasureOnNeuron(const sandbox::SandboxSpec& runner, const std::string& scratch, const std::atomic<bool>* cancel,
                       v1::ProfileResult* result) const;

  KernelProfilerOptions options_;
};

// Where the harness lives when not configured: $ACCELOPT_HARNESS_DIR, then beside the installed binary
// (<exe>/../share/accelopt/harness), then the source tree this binary was built from.
std::string DefaultHarnessDir();

// "sim-trn1", "sim-trn2", "neuron".
std::string DeviceName(v1::Device device);
// The inverse of DeviceName; nullopt for any other text.
std::optional<v1::Device> ParseDeviceName(absl::string_view name);

}  // namespace accelopt::profiler

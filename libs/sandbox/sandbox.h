// Runs an untrusted program in a bubblewrap sandbox: no network, read-only system, a private scratch
// directory, limits on CPU time, memory and processes, and a hard kill of the whole process tree at its
// deadline or on cancellation.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace accelopt::sandbox {

struct SandboxLimits {
  int cpu_seconds = 600;   // RLIMIT_CPU: SIGXCPU/SIGKILL past it
  int memory_mb = 8192;    // RLIMIT_AS
  int max_processes = 64;  // RLIMIT_NPROC of the unprivileged sandbox user (when started as root)
};

struct SandboxSpec {
  // Command run inside the sandbox (absolute paths as seen inside).
  std::vector<std::string> argv;
  // Host directory bound read-write at /scratch (the working directory). Must exist.
  std::string scratch_dir;
  // Host paths bound read-only at the given sandbox paths (e.g. the harness at /harness).
  std::vector<std::pair<std::string, std::string>> read_only_binds;
  // Host devices passed through (e.g. /dev/neuron0 for the Neuron backend); absent ones are skipped.
  std::vector<std::string> device_binds;
  // The only environment variables the program sees (the worker's own environment is not passed on).
  std::vector<std::pair<std::string, std::string>> env;
  SandboxLimits limits;
  absl::Duration timeout = absl::Minutes(5);
  // bubblewrap binary; with `use_bwrap` false the program runs as a plain child with the same limits
  // (tests of the harness only).
  std::string bwrap = "bwrap";
  bool use_bwrap = true;
  // When the worker runs as root, the sandbox runs as this unprivileged uid/gid (per slot, so that
  // RLIMIT_NPROC counts only this sandbox's processes).
  int sandbox_uid = 65534;
};

struct SandboxOutcome {
  enum class Ending { kExited, kSignaled, kTimedOut, kCancelled };
  Ending ending = Ending::kExited;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignaled
  double wall_seconds = 0;
  // Last bytes of the program's stdout and stderr (at most 64 KiB).
  std::string output;
};

// Runs `spec` to completion, timeout or cancellation (`cancel` becoming true). Never throws; errors that
// prevent starting at all (no bwrap, no scratch dir) are UNAVAILABLE / FAILED_PRECONDITION.
absl::StatusOr<SandboxOutcome> RunInSandbox(const SandboxSpec& spec, const std::atomic<bool>* cancel);

}  // namespace accelopt::sandbox

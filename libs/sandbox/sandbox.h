// Runs an untrusted program in a bubblewrap sandbox: no network, read-only system, a private size-limited
// scratch directory and /tmp, limits on CPU time, memory, file size and processes, a bounded copy of its output,
// and a hard kill of the whole process tree at its deadline or on cancellation.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace accelopt::sandbox {

struct SandboxLimits {
  int cpu_seconds = 600;   // RLIMIT_CPU upper bound: SIGXCPU/SIGKILL past it (see cpu_cores)
  int memory_mb = 8192;    // the whole memory budget: RLIMIT_AS plus the tmpfs sizes below
  int max_processes = 64;  // RLIMIT_NPROC of the unprivileged sandbox user (when started as root)
  // Size of the private tmpfs /tmp, MiB (counted inside memory_mb).
  int tmp_mb = 256;
  // Size of the tmpfs /scratch when the spec lists output_files, MiB (counted inside memory_mb). It is also
  // the largest file the program may write (RLIMIT_FSIZE), so the output files copied to the host stay bounded.
  int scratch_mb = 512;
  // The slot's share of the machine, in cores: RLIMIT_CPU is min(cpu_seconds, timeout x cpu_cores).
  double cpu_cores = 1.0;
  // Scheduler weight of the program (setpriority), and SCHED_BATCH: a spinning kernel yields to the worker.
  int nice = 10;
};

struct SandboxSpec {
  // Command run inside the sandbox (absolute paths as seen inside).
  std::vector<std::string> argv;
  // Host directory of the run (the working directory, /scratch inside). Must exist.
  std::string scratch_dir;
  // With output_files empty, scratch_dir is bound read-write at /scratch (unbounded: trusted programs only).
  // Otherwise /scratch is a tmpfs of limits.scratch_mb holding read-only binds of the files present in
  // scratch_dir at start, and these names (relative to scratch_dir) bound read-write: the only host files the
  // program can write. Output files left empty are removed afterwards, so "absent" still means "not written".
  std::vector<std::string> output_files;
  // Host paths bound read-only at the given sandbox paths (e.g. the harness at /harness). bubblewrap resolves
  // them as the sandbox user: stage trees from private directories first (staged_copy.h).
  std::vector<std::pair<std::string, std::string>> read_only_binds;
  // Host devices passed through (e.g. /dev/neuron0 for the Neuron backend); absent ones are skipped.
  std::vector<std::string> device_binds;
  // The only environment of bubblewrap and the program: the worker's own environment is never passed on.
  std::vector<std::pair<std::string, std::string>> env;
  SandboxLimits limits;
  absl::Duration timeout = absl::Minutes(5);
  // bubblewrap binary (searched in PATH without a slash); with `use_bwrap` false the program runs as a plain
  // child with the same limits (tests of the harness only).
  std::string bwrap = "bwrap";
  bool use_bwrap = true;
  // Open descriptors of the worker the program gets as its descriptors 3, 4, ... (e.g. the ends of a pipe between
  // two sandboxes). RunInSandbox closes them in the worker once the program is started (or failed to start), so
  // their last close is the exit of the program's whole process tree (the sandbox's reaper holds them until then).
  // The program inherits no other descriptor but 0, 1 and 2.
  std::vector<int> pass_fds;
  // When the worker runs as root, the sandbox runs as this unprivileged uid/gid (one per slot and worker, see
  // uid_range.h, so that RLIMIT_NPROC counts only this sandbox's processes).
  int sandbox_uid = 65534;
};

struct SandboxOutcome {
  enum class Ending { kExited, kSignaled, kTimedOut, kCancelled };
  Ending ending = Ending::kExited;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignaled
  double wall_seconds = 0;
  // The program's stdout and stderr: the first and last 32 KiB, with "[... N bytes dropped ...]" between
  // them when it wrote more. Nothing more is kept anywhere.
  std::string output;
};

// Runs `spec` to completion, timeout or cancellation (`cancel` becoming true). Never throws; errors that
// prevent starting at all (no bwrap, no scratch dir) are UNAVAILABLE / FAILED_PRECONDITION, limits whose tmpfs
// sizes leave no memory for the program are INVALID_ARGUMENT.
absl::StatusOr<SandboxOutcome> RunInSandbox(const SandboxSpec& spec, const std::atomic<bool>* cancel);

}  // namespace accelopt::sandbox

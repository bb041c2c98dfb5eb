// Checks and times one kernel on a device backend: writes the problem and kernel into a private scratch
// directory, runs the backend's runner under the harness guard in the sandbox, maps the outcome to a verdict
// and lets the backend measure an OK run. Every outcome is a ProfileResult verdict; nothing here throws.
//
// Thread-safe: Profile() may run concurrently (one call per worker slot).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "accelopt/v1/common.pb.h"
#include "libs/sandbox/sandbox.h"
#include "libs/sandbox/worker_sandbox.h"
#include "services/profiler/device_backend.h"

namespace accelopt::profiler {

struct KernelProfilerOptions {
  std::string python = "/usr/bin/python3";
  // Directory holding harness_guard.py and the backends' runners (bound read-only at /harness).
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
};

class KernelProfiler {
 public:
  // `backend` must not be null.
  KernelProfiler(KernelProfilerOptions options, std::unique_ptr<const DeviceBackend> backend);

  // Start-up checks: bubblewrap (unless disabled), the backend's runner in the harness directory, the
  // interpreter, then the backend's own. FAILED_PRECONDITION naming the config field and what is missing.
  absl::Status CheckReady() const;

  // Starts the sandbox as a profile would (same binds, environment and limits, slot 0's user) and runs the
  // interpreter importing numpy in it. FAILED_PRECONDITION with the sandbox's last output line when it does
  // not start or the import fails (e.g. user namespaces are not allowed); UNAVAILABLE without a scratch dir.
  absl::Status CheckSandboxStarts() const;

  // `slot` selects the sandbox user (so process limits are per slot). `cancel` may be null.
  v1::ProfileResult Profile(const v1::Kernel& kernel, const v1::Problem& problem, const v1::ProfileOptions& options,
                            int slot, const std::atomic<bool>* cancel) const;

  // Runs every sandbox of this profiler in `worker_sandbox`'s uid range, from its staged harness copy, with its
  // scratch directories in the worker's scratch directory, and holds all three for the profiler's life.
  void AdoptWorkerSandbox(sandbox::WorkerSandbox worker_sandbox);

  const KernelProfilerOptions& options() const { return options_; }
  const DeviceBackend& backend() const { return *backend_; }

 private:
  // The sandboxed run of one profile whose files are in `scratch` (host path).
  sandbox::SandboxSpec RunSpec(const std::string& scratch, const std::string& reference_name,
                               const v1::Problem& problem, const v1::ProfileOptions& options, double timeout,
                               int slot) const;

  KernelProfilerOptions options_;
  std::unique_ptr<const DeviceBackend> backend_;
  std::optional<sandbox::WorkerSandbox> worker_sandbox_;
};

// Where the harness lives when not configured: $ACCELOPT_HARNESS_DIR when set, else share/accelopt/harness of the
// install prefix (or build tree), found by core::FindResourceDir.
std::string DefaultHarnessDir();

}  // namespace accelopt::profiler

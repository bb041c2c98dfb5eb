// Checks and times one kernel on a device backend: writes the problem and kernel into a private scratch
// directory, runs the backend's runner under the harness guard in the sandbox, maps the outcome to a verdict
// and lets the backend measure an OK run. Every outcome is a ProfileResult verdict; nothing here throws.
//
// Thread-safe: Profile() may run concurrently (one call per worker slot).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "accelopt/v1/common.pb.h"
#include "libs/sandbox/sandbox.h"
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

  // `slot` selects the sandbox user (so process limits are per slot). `cancel` may be null.
  v1::ProfileResult Profile(const v1::Kernel& kernel, const v1::Problem& problem, const v1::ProfileOptions& options,
                            int slot, const std::atomic<bool>* cancel) const;

  const KernelProfilerOptions& options() const { return options_; }
  const DeviceBackend& backend() const { return *backend_; }

 private:
  // The sandboxed run of one profile whose files are in `scratch` (host path).
  sandbox::SandboxSpec RunSpec(const std::string& scratch, const std::string& reference_name,
                               const v1::Problem& problem, const v1::ProfileOptions& options, double timeout,
                               int slot) const;

  KernelProfilerOptions options_;
  std::unique_ptr<const DeviceBackend> backend_;
};

// Where the harness lives when not configured: $ACCELOPT_HARNESS_DIR when set, else share/accelopt/harness of the
// install prefix (or build tree), found by core::FindResourceDir.
std::string DefaultHarnessDir();

}  // namespace accelopt::profiler

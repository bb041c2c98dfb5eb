// A copy of a read-only tree (e.g. the harness) that the sandbox users can read wherever the original lives:
// a checkout in a 0700 home directory, or files with mode 0600, stays as it is.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libs/sandbox/locked_dir.h"

namespace accelopt::sandbox {

class StagedCopy {
 public:
  // Copies `source` into a new LockedDir under `root` (which the worker controls, e.g. the scratch root):
  // directories 0755, files 0644 (0755 when executable); symlinks, special files, hidden entries (names starting
  // with '.', such as .mypy_cache) and __pycache__ directories are skipped. The copy is removed when this is
  // destroyed, and copies left by killed processes are removed by a later Create.
  static absl::StatusOr<StagedCopy> Create(const std::string& source, const std::string& root);

  const std::string& path() const { return dir_.path(); }

 private:
  explicit StagedCopy(LockedDir dir) : dir_(std::move(dir)) {}
  LockedDir dir_;
};

}  // namespace accelopt::sandbox

// A copy of a read-only tree (e.g. the harness) that the sandbox users can read wherever the original lives:
// a checkout in a 0700 home directory, or files with mode 0600, stays as it is.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace accelopt::sandbox {

class StagedCopy {
 public:
  // Copies `source` into a new directory under `root` (which the worker controls, e.g. the scratch root):
  // directories 0755, files 0644 (0755 when executable); symlinks, special files, hidden entries (names starting
  // with '.', such as .mypy_cache) and __pycache__ directories are skipped. The copy is
  // removed when this is destroyed. A lock file beside it, held while this lives, lets a later Create remove
  // copies left by processes that were killed (unlocked and older than a minute).
  static absl::StatusOr<StagedCopy> Create(const std::string& source, const std::string& root);

  StagedCopy(StagedCopy&& other) noexcept;
  StagedCopy& operator=(StagedCopy&& other) noexcept;
  StagedCopy(const StagedCopy&) = delete;
  StagedCopy& operator=(const StagedCopy&) = delete;
  ~StagedCopy();

  const std::string& path() const { return path_; }

 private:
  StagedCopy(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  void Release();
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace accelopt::sandbox

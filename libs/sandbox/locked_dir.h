// A directory a worker process owns for its lifetime, under a root other workers may share (e.g. /tmp). A lock
// file beside it, held while this lives, lets the next Create under the same root and prefix remove directories
// left by processes that were killed (their lock is free), so kill -9 and OOM kills leave nothing behind once the
// worker starts again.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace accelopt::sandbox {

class LockedDir {
 public:
  // Removes the stale `root/PREFIXxxxxxx` directories, then creates a new one with `mode` and locks it.
  static absl::StatusOr<LockedDir> Create(const std::string& root, const std::string& prefix, unsigned mode);

  LockedDir(LockedDir&& other) noexcept;
  LockedDir& operator=(LockedDir&& other) noexcept;
  LockedDir(const LockedDir&) = delete;
  LockedDir& operator=(const LockedDir&) = delete;
  // Removes the directory with everything in it, then its lock file.
  ~LockedDir();

  const std::string& path() const { return path_; }

 private:
  LockedDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  void Release();
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace accelopt::sandbox

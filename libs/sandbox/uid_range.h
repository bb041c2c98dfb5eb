// A range of unprivileged uids for one worker process's sandboxes, held exclusively for the process's life, so
// that two workers (or two local clusters) on one host never run sandboxes as the same uid: RLIMIT_NPROC then
// counts only one worker's sandboxes, and a fork bomb under one cannot starve another.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace accelopt::sandbox {

struct UidRangeOptions {
  // Width of every range: one uid per slot.
  int width = 64;
  // Ranges are [first + k * width, first + (k + 1) * width) for k < ranges.
  // Above 65535, clear of the fixed uids (60000 + n) that other sandbox users on the host take.
  int first = 100000;
  int ranges = 256;
  // Holds one lock file per range (created if missing).
  std::string lock_dir = "/tmp/accelopt-uids";
};

class UidRange {
 public:
  // Takes the first range no other process holds (flock, released when the process exits or this is
  // destroyed). RESOURCE_EXHAUSTED when every range is taken.
  static absl::StatusOr<UidRange> AcquireAny(const UidRangeOptions& options);
  // Takes the range starting at `base` (a configured one); FAILED_PRECONDITION naming the base when another
  // process holds it.
  static absl::StatusOr<UidRange> AcquireAt(int base, const UidRangeOptions& options);

  UidRange(UidRange&& other) noexcept;
  UidRange& operator=(UidRange&& other) noexcept;
  UidRange(const UidRange&) = delete;
  UidRange& operator=(const UidRange&) = delete;
  ~UidRange();

  int base() const { return base_; }
  int width() const { return width_; }
  // The uid of `slot` (0 <= slot < width).
  int uid(int slot) const { return base_ + slot; }

 private:
  UidRange(int base, int width, int lock_fd) : base_(base), width_(width), lock_fd_(lock_fd) {}
  int base_ = 0;
  int width_ = 0;
  int lock_fd_ = -1;
};

}  // namespace accelopt::sandbox

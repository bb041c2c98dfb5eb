#include "libs/sandbox/uid_range.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace accelopt::sandbox {
namespace {

// The lock directory is shared by every user's workers: world-writable and sticky, like /tmp.
absl::Status EnsureLockDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 01777) == 0) {
    chmod(dir.c_str(), 01777);  // past the umask
  } else if (errno != EEXIST) {
    return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// The lock fd when this process now holds the range starting at `base`; -1 when another holds it.
absl::StatusOr<int> TryLock(const std::string& dir, int base) {
  const std::string path = absl::StrCat(dir, "/uids-", base, ".lock");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  const int error = errno;
  close(fd);
  if (error == EWOULDBLOCK) return -1;
  return absl::UnavailableError(absl::StrCat("cannot lock ", path, ": ", std::strerror(error)));
}

}  // namespace

absl::StatusOr<UidRange> UidRange::AcquireAny(const UidRangeOptions& options) {
  if (auto s = EnsureLockDir(options.lock_dir); !s.ok()) return s;
  for (int k = 0; k < options.ranges; ++k) {
    const int base = options.first + k * options.width;
    auto fd = TryLock(options.lock_dir, base);
    if (!fd.ok()) return fd.status();
    if (*fd >= 0) return UidRange(base, options.width, *fd);
  }
  return absl::ResourceExhaustedError(absl::StrCat("all ", options.ranges, " sandbox uid ranges from ", options.first,
                                                   " are held by other processes (locks in ", options.lock_dir, ")"));
}

absl::StatusOr<UidRange> UidRange::AcquireAt(int base, const UidRangeOptions& options) {
  if (auto s = EnsureLockDir(options.lock_dir); !s.ok()) return s;
  auto fd = TryLock(options.lock_dir, base);
  if (!fd.ok()) return fd.status();
  if (*fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox uid range ", base, " is held by another process (lock in ", options.lock_dir, ")"));
  }
  return UidRange(base, options.width, *fd);
}

UidRange::UidRange(UidRange&& other) noexcept
    : base_(other.base_), width_(other.width_), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

UidRange& UidRange::operator=(UidRange&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) close(lock_fd_);
    base_ = other.base_;
    width_ = other.width_;
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

UidRange::~UidRange() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

}  // namespace accelopt::sandbox

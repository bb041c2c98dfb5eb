#include "libs/storage/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace accelopt::storage {

absl::StatusOr<uint64_t> FreeBytes(const std::string& path) {
  struct statvfs fs {};
  if (statvfs(path.c_str(), &fs) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot query free space of ", path, ": ", std::strerror(errno)));
  }
  return static_cast<uint64_t>(fs.f_bavail) * static_cast<uint64_t>(fs.f_frsize);
}

absl::Status CheckFreeSpace(const std::string& path, uint64_t reserve_bytes) {
  auto free = FreeBytes(path);
  if (!free.ok()) return free.status();
  if (*free >= reserve_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("disk full: the store at ", path, " has ", *free,
                                                   " bytes free, below the reserve of ", reserve_bytes, " bytes"));
}

}  // namespace accelopt::storage

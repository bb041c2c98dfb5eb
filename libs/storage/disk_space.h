// Free space on the filesystem holding a path, and the "disk full" error the stores return when it runs
// below a reserve.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accelopt::storage {

// Bytes an unprivileged process may still write on the filesystem holding `path` (statvfs f_bavail).
// UNAVAILABLE when the filesystem cannot be queried.
absl::StatusOr<uint64_t> FreeBytes(const std::string& path);

// OK while the filesystem holding `path` has at least `reserve_bytes` free; otherwise RESOURCE_EXHAUSTED
// naming the path, the free bytes and the reserve ("disk full: ..."). A failed statvfs is UNAVAILABLE.
absl::Status CheckFreeSpace(const std::string& path, uint64_t reserve_bytes);

}  // namespace accelopt::storage

// A consistent copy of a RocksDB store, taken while another process serves it (backups of the orchestrator's
// job store and the memory service's experience store).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace accelopt::storage {

// Opens the store at `store_path` read-only (no lock: the serving process keeps it open) and writes a RocksDB
// checkpoint of every column family to `dest`, which must not exist and should be on the same filesystem (SST
// files are hard-linked, the rest copied). The checkpoint is itself a store that KvStore::Open reads.
// NOT_FOUND when there is no store at `store_path`; ALREADY_EXISTS when `dest` exists; otherwise RocksDB's
// error with context (retry when the serving process deleted a file during the copy).
absl::Status CheckpointStore(const std::string& store_path, const std::string& dest);

}  // namespace accelopt::storage

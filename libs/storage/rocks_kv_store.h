// The KvStore over RocksDB: one database directory, one column family per family name, every write synced
// to disk before it returns.
//
// A full disk is an error the store survives: writes are refused with RESOURCE_EXHAUSTED while the disk has
// less than a reserve free (so RocksDB's own flushes and compactions always find room), an ENOSPC that still
// reaches RocksDB stops its writes with a status instead of an abort, and a background probe resumes the
// database once space is free again. Corrupt data found by a read or by the periodic checksum verification
// is remembered: Health() reports DATA_LOSS until the process restarts on repaired data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/storage/kv_store.h"

namespace accelopt::storage {

struct RocksKvStoreOptions {
  // Writes fail with RESOURCE_EXHAUSTED ("disk full: ...") while the filesystem has less free space.
  uint64_t reserve_bytes = 8ull << 20;
  // How often the background probe checks free space and resumes a database stopped by a write error.
  absl::Duration probe_interval = absl::Seconds(1);
  // How often every table file's checksums are verified; zero disables it.
  absl::Duration verify_interval = absl::Minutes(5);
};

class RocksKvStore final : public KvStore {
 public:
  // Opens (creating when missing) the store at `path` with the given column families (the default family
  // always exists as "default"; families found on disk are opened too). UNAVAILABLE when the directory
  // cannot be created or the store is locked by another process; DATA_LOSS when it is corrupt.
  static absl::StatusOr<std::unique_ptr<RocksKvStore>> Open(const std::string& path,
                                                            const std::vector<std::string>& families,
                                                            RocksKvStoreOptions options = {});
  ~RocksKvStore() override;

  absl::StatusOr<std::string> Get(absl::string_view family, absl::string_view key) const override;
  absl::Status Write(WriteBatch batch) override;
  absl::Status Scan(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const override;
  absl::Status ScanReverse(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const override;
  absl::Status Health() const override;

 private:
  struct Impl;
  explicit RocksKvStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accelopt::storage

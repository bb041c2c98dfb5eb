// The KvStore over RocksDB: one database directory, one column family per family name, every write synced
// to disk before it returns.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/storage/kv_store.h"

namespace accelopt::storage {

class RocksKvStore final : public KvStore {
 public:
  // Opens (creating when missing) the store at `path` with the given column families (the default family
  // always exists as "default"; families found on disk are opened too). UNAVAILABLE when the directory
  // cannot be created or the store is locked by another process.
  static absl::StatusOr<std::unique_ptr<RocksKvStore>> Open(const std::string& path,
                                                            const std::vector<std::string>& families);
  ~RocksKvStore() override;

  absl::StatusOr<std::string> Get(absl::string_view family, absl::string_view key) const override;
  absl::Status Write(WriteBatch batch) override;
  absl::Status Scan(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const override;
  absl::Status ScanReverse(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const override;

 private:
  struct Impl;
  explicit RocksKvStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accelopt::storage

// A durable key-value store with column families and atomic batches, over RocksDB. No RocksDB type appears
// in this interface; errors are absl::Status.
//
// Thread-safe: any method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::storage {

// A set of writes applied all together or not at all.
class WriteBatch {
 public:
  WriteBatch();
  ~WriteBatch();
  WriteBatch(WriteBatch&&) noexcept;
  WriteBatch& operator=(WriteBatch&&) noexcept;

  void Put(absl::string_view family, absl::string_view key, absl::string_view value);
  void Delete(absl::string_view family, absl::string_view key);
  bool empty() const;

 private:
  friend class KvStore;
  struct Op {
    std::string family, key, value;
    bool is_delete;
  };
  std::vector<Op> ops_;
};

class KvStore {
 public:
  // Opens (creating when missing) the store at `path` with the given column families (the default family
  // always exists as "default"). Writes are synced to disk before they return.
  static absl::StatusOr<std::unique_ptr<KvStore>> Open(const std::string& path,
                                                       const std::vector<std::string>& families);
  ~KvStore();

  // NOT_FOUND when the key does not exist; INVALID_ARGUMENT for an unknown family.
  absl::StatusOr<std::string> Get(absl::string_view family, absl::string_view key) const;
  absl::Status Put(absl::string_view family, absl::string_view key, absl::string_view value);
  // Not an error when the key does not exist.
  absl::Status Delete(absl::string_view family, absl::string_view key);
  // Applies every write of `batch` atomically and durably.
  absl::Status Write(WriteBatch batch);
  // Calls `fn(key, value)` for every key starting with `prefix`, in key order, until it returns false.
  absl::Status Scan(absl::string_view family, absl::string_view prefix,
                    const std::function<bool(absl::string_view, absl::string_view)>& fn) const;
  // Like Scan, from the last key with `prefix` backwards.
  absl::Status ScanReverse(absl::string_view family, absl::string_view prefix,
                           const std::function<bool(absl::string_view, absl::string_view)>& fn) const;

 private:
  struct Impl;
  explicit KvStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accelopt::storage

// A durable key-value store with column families and atomic batches. KvStore is the interface the
// services program against; RocksKvStore (rocks_kv_store.h) is the real one, and tests wrap it (e.g.
// libs/testing/fault_injecting_kv_store.h). No RocksDB type appears here; errors are absl::Status.
//
// Implementations are thread-safe: any method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::storage {

// A set of writes applied all together or not at all.
class WriteBatch {
 public:
  struct Op {
    std::string family, key, value;
    bool is_delete;
  };

  WriteBatch();
  ~WriteBatch();
  WriteBatch(WriteBatch&&) noexcept;
  WriteBatch& operator=(WriteBatch&&) noexcept;

  void Put(absl::string_view family, absl::string_view key, absl::string_view value);
  void Delete(absl::string_view family, absl::string_view key);
  bool empty() const;
  // The writes, in the order they were added.
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
};

class KvStore {
 public:
  using ScanFn = std::function<bool(absl::string_view key, absl::string_view value)>;

  // Opens (creating when missing) the RocksDB store at `path` with the default RocksKvStoreOptions; see
  // RocksKvStore::Open.
  static absl::StatusOr<std::unique_ptr<KvStore>> Open(const std::string& path,
                                                       const std::vector<std::string>& families);
  virtual ~KvStore() = default;

  // OK while the store can take writes; otherwise why not: RESOURCE_EXHAUSTED when its disk is (nearly)
  // full, DATA_LOSS when corrupt data was found, UNAVAILABLE after an I/O error. The message names the
  // store's path. Services use it as their readiness. The default (a store that cannot fail) is always OK.
  virtual absl::Status Health() const { return absl::OkStatus(); }

  // NOT_FOUND when the key does not exist; INVALID_ARGUMENT for an unknown family.
  virtual absl::StatusOr<std::string> Get(absl::string_view family, absl::string_view key) const = 0;
  // Applies every write of `batch` atomically and durably (synced to disk before it returns); on error none
  // of them is applied.
  virtual absl::Status Write(WriteBatch batch) = 0;
  // Calls `fn(key, value)` for every key starting with `prefix`, in key order, until it returns false.
  virtual absl::Status Scan(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const = 0;
  // Like Scan, from the last key with `prefix` backwards.
  virtual absl::Status ScanReverse(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const = 0;

  // A one-write batch.
  absl::Status Put(absl::string_view family, absl::string_view key, absl::string_view value);
  // Not an error when the key does not exist. A one-write batch.
  absl::Status Delete(absl::string_view family, absl::string_view key);
};

}  // namespace accelopt::storage

// A KvStore for tests that wraps a real one and makes chosen writes fail, to exercise how callers handle a
// store that refuses a commit (disk full, I/O error). Reads always go to the wrapped store. A failed write
// never reaches the wrapped store, so it holds exactly the writes that succeeded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "libs/storage/kv_store.h"

namespace accelopt::testing {

// Thread-safe.
class FaultInjectingKvStore final : public storage::KvStore {
 public:
  // Decides whether a write fails: `number` counts every write attempted through this store, from 1.
  using Predicate = std::function<bool(int number, const storage::WriteBatch& batch)>;

  // `base` must outlive this.
  explicit FaultInjectingKvStore(storage::KvStore* base) : base_(base) {}

  // Write number `n` fails with `status`; with `and_every_later_one`, so do all writes after it.
  void FailNthWrite(int n, absl::Status status, bool and_every_later_one = false);
  // Every write for which `predicate` holds fails with `status`. Replaces any earlier rule.
  void FailWritesMatching(Predicate predicate, absl::Status status);
  // Lets every write through again.
  void Heal();

  // Writes attempted so far (failed ones included).
  int writes() const;
  // The numbers of the writes that were made to fail, in order.
  std::vector<int> failed_writes() const;

  absl::StatusOr<std::string> Get(absl::string_view family, absl::string_view key) const override;
  absl::Status Write(storage::WriteBatch batch) override;
  absl::Status Scan(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const override;
  absl::Status ScanReverse(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const override;
  // The wrapped store's health.
  absl::Status Health() const override { return base_->Health(); }

 private:
  storage::KvStore* const base_;
  mutable absl::Mutex mu_;
  Predicate predicate_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  int writes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int> failed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::testing

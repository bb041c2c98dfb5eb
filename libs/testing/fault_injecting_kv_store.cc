#include "libs/testing/fault_injecting_kv_store.h"

#include <utility>

namespace accelopt::testing {

void FaultInjectingKvStore::FailNthWrite(int n, absl::Status status, bool and_every_later_one) {
  FailWritesMatching(
      [n, and_every_later_one](int number, const storage::WriteBatch&) {
        return and_every_later_one ? number >= n : number == n;
      },
      std::move(status));
}

void FaultInjectingKvStore::FailWritesMatching(Predicate predicate, absl::Status status) {
  absl::MutexLock lock(&mu_);
  predicate_ = std::move(predicate);
  status_ = std::move(status);
}

void FaultInjectingKvStore::Heal() {
  absl::MutexLock lock(&mu_);
  predicate_ = nullptr;
}

int FaultInjectingKvStore::writes() const {
  absl::MutexLock lock(&mu_);
  return writes_;
}

std::vector<int> FaultInjectingKvStore::failed_writes() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

absl::StatusOr<std::string> FaultInjectingKvStore::Get(absl::string_view family, absl::string_view key) const {
  return base_->Get(family, key);
}

absl::Status FaultInjectingKvStore::Write(storage::WriteBatch batch) {
  {
    absl::MutexLock lock(&mu_);
    const int number = ++writes_;
    if (predicate_ && predicate_(number, batch)) {
      failed_.push_back(number);
      return status_;
    }
  }
  return base_->Write(std::move(batch));
}

absl::Status FaultInjectingKvStore::Scan(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const {
  return base_->Scan(family, prefix, fn);
}

absl::Status FaultInjectingKvStore::ScanReverse(absl::string_view family, absl::string_view prefix,
                                                const ScanFn& fn) const {
  return base_->ScanReverse(family, prefix, fn);
}

}  // namespace accelopt::testing

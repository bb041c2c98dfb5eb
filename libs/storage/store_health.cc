#include "libs/storage/store_health.h"

namespace accelopt::storage {

void StoreHealth::SetDisk(absl::Status status) {
  absl::MutexLock lock(&mu_);
  disk_ = std::move(status);
}

void StoreHealth::SetStopped(absl::Status error) {
  absl::MutexLock lock(&mu_);
  stopped_ = std::move(error);
}

void StoreHealth::Resumed() {
  absl::MutexLock lock(&mu_);
  stopped_ = absl::OkStatus();
}

bool StoreHealth::stopped() const {
  absl::MutexLock lock(&mu_);
  return !stopped_.ok();
}

void StoreHealth::SetCorrupt(absl::Status error) {
  absl::MutexLock lock(&mu_);
  if (corrupt_.ok()) corrupt_ = std::move(error);
}

absl::Status StoreHealth::Get() const {
  absl::MutexLock lock(&mu_);
  if (!corrupt_.ok()) return corrupt_;
  if (!stopped_.ok()) return stopped_;
  return disk_;
}

}  // namespace accelopt::storage

// What is currently wrong with a store, from three sources: its disk's free space, a write error that
// stopped the database (until it resumes), and corrupt data (until the process restarts). Thread-safe.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace accelopt::storage {

class StoreHealth {
 public:
  // The latest free-space check (OK or RESOURCE_EXHAUSTED).
  void SetDisk(absl::Status status);
  // The database stopped taking writes after `error`; cleared by Resumed().
  void SetStopped(absl::Status error);
  void Resumed();
  bool stopped() const;
  // Corrupt data was found; kept for the life of the process (the first one found is reported).
  void SetCorrupt(absl::Status error);

  // The first problem, in the order corruption, stopped database, low disk; OK when there is none.
  absl::Status Get() const;

 private:
  mutable absl::Mutex mu_;
  absl::Status disk_ ABSL_GUARDED_BY(mu_);
  absl::Status stopped_ ABSL_GUARDED_BY(mu_);
  absl::Status corrupt_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accelopt::storage

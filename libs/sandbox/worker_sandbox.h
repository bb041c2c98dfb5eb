// What one worker process holds for the life of its sandboxes: a uid range no other process on the host uses
// and a copy of the harness the sandbox users can read wherever the checkout or install lives.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libs/sandbox/staged_copy.h"
#include "libs/sandbox/uid_range.h"

namespace accelopt::sandbox {

struct WorkerSandbox {
  UidRange uids;
  StagedCopy harness;
};

// Takes the uid range at `uid_base` (0: the first free one) wide enough for `slots`, and stages `harness_dir`
// under `scratch_root`. Errors name the problem (range taken, too many slots, unreadable harness).
absl::StatusOr<WorkerSandbox> PrepareWorkerSandbox(const std::string& harness_dir, const std::string& scratch_root,
                                                   int uid_base, int slots);

}  // namespace accelopt::sandbox

// What one worker process holds for the life of its sandboxes: a uid range no other process on the host uses,
// a copy of the harness the sandbox users can read wherever the checkout or install lives, and the directory its
// profiles' scratch directories are made in (what a killed worker leaves there is removed by the next worker).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libs/sandbox/locked_dir.h"
#include "libs/sandbox/staged_copy.h"
#include "libs/sandbox/uid_range.h"

namespace accelopt::sandbox {

struct WorkerSandbox {
  UidRange uids;
  StagedCopy harness;
  LockedDir scratch;  // mode 0711: sandbox users reach their own scratch directory but cannot list the others
};

// Takes the uid range at `uid_base` (0: the first free one) wide enough for `slots`, stages `harness_dir` and
// makes the scratch directory under `scratch_root`. Errors name the problem (range taken, too many slots, unreadable
// harness).
absl::StatusOr<WorkerSandbox> PrepareWorkerSandbox(const std::string& harness_dir, const std::string& scratch_root,
                                                   int uid_base, int slots);

}  // namespace accelopt::sandbox

#include "libs/sandbox/worker_sandbox.h"

#include "absl/strings/str_cat.h"

namespace accelopt::sandbox {

absl::StatusOr<WorkerSandbox> PrepareWorkerSandbox(const std::string& harness_dir, const std::string& scratch_root,
                                                   int uid_base, int slots) {
  UidRangeOptions options;
  if (slots > options.width) {
    return absl::InvalidArgumentError(
        absl::StrCat("slots: at most ", options.width, " per worker (one sandbox uid each), not ", slots));
  }
  auto uids = uid_base > 0 ? UidRange::AcquireAt(uid_base, options) : UidRange::AcquireAny(options);
  if (!uids.ok()) return uids.status();
  auto harness = StagedCopy::Create(harness_dir, scratch_root);
  if (!harness.ok()) return harness.status();
  auto scratch = LockedDir::Create(scratch_root, "accelopt-scratch-", 0711);
  if (!scratch.ok()) return scratch.status();
  return WorkerSandbox{*std::move(uids), *std::move(harness), *std::move(scratch)};
}

}  // namespace accelopt::sandbox

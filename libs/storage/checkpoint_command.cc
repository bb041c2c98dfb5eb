#include "libs/storage/checkpoint_command.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "libs/storage/store_checkpoint.h"

ABSL_FLAG(std::string, checkpoint, "",
          "Write a checkpoint of the store in data_dir to this new directory and exit (works while the store is "
          "served)");

namespace accelopt::storage {

std::optional<int> RunCheckpointCommand(const std::string& data_dir, const std::string& program) {
  const std::string dest = absl::GetFlag(FLAGS_checkpoint);
  if (dest.empty()) return std::nullopt;
  if (absl::Status s = CheckpointStore(data_dir, dest); !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), std::string(s.message()).c_str());
    return 1;
  }
  std::printf("checkpoint of %s written to %s\n", data_dir.c_str(), dest.c_str());
  return 0;
}

}  // namespace accelopt::storage

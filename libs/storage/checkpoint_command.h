// The `--checkpoint DIR` flag of the services that own a store (orchestrator, memory): instead of serving,
// write a checkpoint of the store in the config's data_dir to DIR and exit, even while another process of the
// same service serves that store (`kubectl exec orchestrator-0 -- accelopt-orchestrator --config ... --checkpoint
// DIR`).
#pragma once

#include <optional>
#include <string>

namespace accelopt::storage {

// Nothing when --checkpoint was not given; otherwise runs CheckpointStore(data_dir, DIR), prints one line
// naming the result (stdout) or the error (stderr, prefixed with `program`) and returns the exit code (0 or 1).
std::optional<int> RunCheckpointCommand(const std::string& data_dir, const std::string& program);

}  // namespace accelopt::storage

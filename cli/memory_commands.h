// `accelopt memory list | export | import`: the optimization memory of a running memory service.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cli/command.h"

namespace accelopt::cli {

Command MemoryCommand();

// The memory service address: `server` when given; else the "memory" entry of <data_dir>/cluster.json
// (`data_dir` defaults to ./.accelopt) when a local cluster is recorded there; else 127.0.0.1:50053.
// DATA_LOSS when cluster.json exists but does not parse.
absl::StatusOr<std::string> MemoryServiceAddress(const std::string& server, const std::string& data_dir);

}  // namespace accelopt::cli

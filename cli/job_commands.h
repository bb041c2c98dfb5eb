// The job commands of `accelopt`: submit, watch, get, list, cancel and export, against the orchestrator's
// JobService (the local cluster's orchestrator from <data-dir>/cluster.json unless --server is given).
#pragma once

#include "cli/command.h"

namespace accelopt::cli {

Command SubmitCommand();
Command WatchCommand();
Command GetCommand();
Command ListCommand();
Command CancelCommand();
Command ExportCommand();

}  // namespace accelopt::cli

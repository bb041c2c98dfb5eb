// The job commands of `accelopt`: submit, watch, get, list, cancel and export, against the orchestrator's
// JobService (the local cluster's orchestrator from <data-dir>/cluster.json unless --server is given).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "accelopt/v1/job_service.grpc.pb.h"
#include "cli/args.h"
#include "cli/command.h"

namespace accelopt::cli {

Command SubmitCommand();
Command WatchCommand();
Command GetCommand();
Command ListCommand();
Command CancelCommand();
Command ExportCommand();

// For commands in other files: parses `argv` with the options every job command takes (--server, --data-dir)
// plus `with_value` / `booleans`, connects to the orchestrator and runs `body`. Usage errors exit 2 (also when
// the positional count is not `positionals`, naming `what`), other errors 1.
int WithJobService(const std::vector<std::string>& argv, std::set<std::string> with_value,
                   const std::set<std::string>& booleans, size_t positionals, const std::string& what,
                   const std::function<int(const Args&, v1::JobService::Stub&, const std::string& address)>& body);
// Prints the failed call's error (naming the address when the orchestrator is unreachable) and returns 1.
int JobRpcFailure(const std::string& address, const grpc::Status& status);
// Sets the deadline every job command uses on `context`.
void SetJobDeadline(grpc::ClientContext* context);

}  // namespace accelopt::cli

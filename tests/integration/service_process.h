// Starts one real service binary on free loopback ports, for integration tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "libs/testing/child_process.h"

namespace accelopt::integration {

inline const std::string kBinDir = ACCELOPT_BINARY_DIR "/bin";
inline const std::vector<std::string> kServiceNames = {"orchestrator", "planner", "executor", "memory", "profiler"};
// The ports `accelopt up --base-port B` gives its services lie in B .. B + 127 (cli/local_cluster.cc).
inline constexpr int kClusterPortSpan = 128;

struct ServiceProcess {
  std::string name;
  std::string grpc_address;
  std::string metrics_address;
  testing::ChildProcess process;
};

// The mode of a test directory whose services run sandboxes in it (the sandbox users pass through).
inline constexpr mode_t kServiceDirMode = 0711;

// Starts accelopt-<name> with a config in `dir` (data under `dir` for stateful services, the profiler's scratch
// directories too: what a killed profiler leaves goes with `dir`), a drain deadline of `drain_seconds`, and free
// gRPC and admin ports. Does not wait for SERVING.
ServiceProcess StartService(const std::string& name, const std::string& dir, double drain_seconds = 2);

}  // namespace accelopt::integration

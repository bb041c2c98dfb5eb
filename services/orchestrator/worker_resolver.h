// Where the profiler workers are: a static address list, or a DNS name that resolves to many addresses
// (a Kubernetes headless Service), resolved again each time the pool asks.
#pragma once

#include <string>
#include <vector>

#include "services/orchestrator/worker_pool.h"

namespace accelopt::orchestrator {

// Always the same addresses.
WorkerResolver StaticWorkers(std::vector<std::string> addresses);

// Every address `name_and_port` ("host:port") resolves to, as "ip:port" ("[ip]:port" for IPv6), sorted.
// UNAVAILABLE naming the host when resolution fails.
WorkerResolver DnsWorkers(std::string name_and_port);

}  // namespace accelopt::orchestrator

// `accelopt health`: one gRPC health check (grpc.health.v1), over TLS when given a CA; exit 0 when SERVING.
// What Kubernetes exec probes run against a service that serves TLS (the kubelet's own gRPC probes cannot).
#pragma once

#include "cli/command.h"

namespace accelopt::cli {

Command HealthCommand();

}  // namespace accelopt::cli

// gRPC adapter of the orchestrator service: the job API and the beam search over a pool of profiler workers
#pragma once

#include "accelopt/v1/job_service.grpc.pb.h"

namespace accelopt::orchestrator {

// RPCs not overridden here answer UNIMPLEMENTED (see the README status table).
class JobServiceImpl final : public v1::JobService::CallbackService {};

}  // namespace accelopt::orchestrator

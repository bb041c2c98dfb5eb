// gRPC adapter of the profiler service: a profiler worker that checks and times kernels on a device backend
#pragma once

#include "accelopt/v1/profiler_service.grpc.pb.h"

namespace accelopt::profiler {

// RPCs not overridden here answer UNIMPLEMENTED (see the README status table).
class ProfilerServiceImpl final : public v1::ProfilerService::CallbackService {};

}  // namespace accelopt::profiler

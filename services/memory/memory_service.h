// gRPC adapter of the memory service: the summarizer agent and the optimization memory
#pragma once

#include "accelopt/v1/memory_service.grpc.pb.h"

namespace accelopt::memory {

// RPCs not overridden here answer UNIMPLEMENTED (see the README status table).
class MemoryServiceImpl final : public v1::MemoryService::CallbackService {};

}  // namespace accelopt::memory

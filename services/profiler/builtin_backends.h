// The registrations of the backends built into the profiler, each defined in its backend's own source file
// and listed once in builtin_backends.cc.
#pragma once

#include <vector>

#include "services/profiler/backend_registry.h"

namespace accelopt::profiler {

// sim-trn1 and sim-trn2: the NKI simulator and the Trainium timing model (simulator_backend.cc).
std::vector<BackendRegistration> SimulatorBackendRegistrations();

// neuron: real Trainium through the Neuron SDK (neuron_backend.cc).
std::vector<BackendRegistration> NeuronBackendRegistrations();

}  // namespace accelopt::profiler

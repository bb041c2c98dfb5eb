#include "services/profiler/builtin_backends.h"

#include <cstdlib>
#include <iostream>

namespace accelopt::profiler {

const BackendRegistry& BuiltinBackends() {
  static const BackendRegistry* const registry = [] {
    auto* r = new BackendRegistry();
    for (auto registrations : {SimulatorBackendRegistrations, NeuronBackendRegistrations}) {
      for (BackendRegistration& registration : registrations()) {
        if (absl::Status s = r->Register(std::move(registration)); !s.ok()) {
          std::cerr << "builtin backends: " << s.message() << "\n";
          std::abort();
        }
      }
    }
    return r;
  }();
  return *registry;
}

}  // namespace accelopt::profiler

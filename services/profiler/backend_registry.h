// The device backends a build knows, keyed by the Device enum and by name. The one source of the device names
// the CLI and the services accept.
//
// A registry is filled once and then only read: BuiltinBackends() is immutable; tests copy it and register
// more. Reading is thread-safe; Register() is not (call it before sharing the registry).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/common.pb.h"
#include "accelopt/v1/config.pb.h"
#include "services/profiler/device_backend.h"

namespace accelopt::profiler {

// One backend as the registry knows it before any is created.
struct BackendRegistration {
  v1::Device device = v1::DEVICE_UNSPECIFIED;
  std::string name;  // e.g. "sim-trn1"
  // Creates the backend from the worker's config (each backend reads its own config message).
  // FAILED_PRECONDITION / INVALID_ARGUMENT when the config or the host cannot support it.
  std::function<absl::StatusOr<std::unique_ptr<DeviceBackend>>(const v1::ProfilerConfig& config)> create;
};

class BackendRegistry {
 public:
  // ALREADY_EXISTS when the device or the name is taken; INVALID_ARGUMENT for an empty name, no factory or
  // DEVICE_UNSPECIFIED.
  absl::Status Register(BackendRegistration registration);

  // NOT_FOUND naming the device when it has no backend.
  absl::StatusOr<std::unique_ptr<DeviceBackend>> Create(v1::Device device, const v1::ProfilerConfig& config) const;

  // The device called `name`; INVALID_ARGUMENT listing the known names otherwise.
  absl::StatusOr<v1::Device> ParseDevice(absl::string_view name) const;
  // The registered name of `device`, else "unknown device N".
  std::string Name(v1::Device device) const;
  // Every registered name, in registration order.
  std::vector<std::string> Names() const;

 private:
  const BackendRegistration* Find(v1::Device device) const;

  std::vector<BackendRegistration> registrations_;
};

// The backends built into this binary (builtin_backends.cc): sim-trn1, sim-trn2, neuron.
const BackendRegistry& BuiltinBackends();

}  // namespace accelopt::profiler

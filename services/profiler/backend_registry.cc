#include "services/profiler/backend_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelopt::profiler {

absl::Status BackendRegistry::Register(BackendRegistration registration) {
  if (registration.device == v1::DEVICE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("backend '", registration.name, "': no device"));
  }
  if (registration.name.empty() || !registration.create) {
    return absl::InvalidArgumentError(
        absl::StrCat("backend of device ", static_cast<int>(registration.device), ": no name or no factory"));
  }
  for (const BackendRegistration& r : registrations_) {
    if (r.device == registration.device || r.name == registration.name) {
      return absl::AlreadyExistsError(absl::StrCat("backend '", registration.name, "' (device ",
                                                   static_cast<int>(registration.device), "): already registered as '",
                                                   r.name, "'"));
    }
  }
  registrations_.push_back(std::move(registration));
  return absl::OkStatus();
}

const BackendRegistration* BackendRegistry::Find(v1::Device device) const {
  for (const BackendRegistration& r : registrations_) {
    if (r.device == device) return &r;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<DeviceBackend>> BackendRegistry::Create(v1::Device device,
                                                                       const v1::ProfilerConfig& config) const {
  const BackendRegistration* r = Find(device);
  if (r == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("device: no backend for ", Name(device), " (known: ", absl::StrJoin(Names(), ", "), ")"));
  }
  return r->create(config);
}

absl::StatusOr<v1::Device> BackendRegistry::ParseDevice(absl::string_view name) const {
  for (const BackendRegistration& r : registrations_) {
    if (r.name == name) return r.device;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", name, "' (one of ", absl::StrJoin(Names(), ", "), ")"));
}

std::string BackendRegistry::Name(v1::Device device) const {
  const BackendRegistration* r = Find(device);
  return r != nullptr ? r->name : absl::StrCat("unknown device ", static_cast<int>(device));
}

std::vector<std::string> BackendRegistry::Names() const {
  std::vector<std::string> names;
  for (const BackendRegistration& r : registrations_) names.push_back(r.name);
  return names;
}

}  // namespace accelopt::profiler

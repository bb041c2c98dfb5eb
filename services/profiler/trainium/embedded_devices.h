// Device YAML files compiled into the library (generated at configure time from devices/*.yaml by
// CMake).
#pragma once

#include <optional>

#include "absl/strings/string_view.h"

namespace accelopt::trainium {

// The text of devices/<name>.yaml as it was when the library was built, or nullopt for an unknown
// name.
std::optional<absl::string_view> EmbeddedDeviceYaml(absl::string_view name);

}  // namespace accelopt::trainium

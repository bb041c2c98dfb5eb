// Short names of proto enum values for people: VERDICT_OK -> "OK", JOB_STATE_RUNNING -> "RUNNING".
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/generated_enum_reflection.h>

#include <string>

namespace accelopt::core {

// The value's name without its enum's prefix (the first value's name minus "UNSPECIFIED", per our proto
// style).
inline std::string ShortEnumName(const google::protobuf::EnumValueDescriptor& value) {
  std::string prefix = value.type()->value(0)->name();
  prefix = prefix.substr(0, prefix.rfind("UNSPECIFIED"));
  const std::string& name = value.name();
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// As above; the number as text for a value the enum does not define.
template <typename Enum>
std::string ShortEnumName(Enum value) {
  const google::protobuf::EnumDescriptor* desc = google::protobuf::GetEnumDescriptor<Enum>();
  const google::protobuf::EnumValueDescriptor* v = desc->FindValueByNumber(static_cast<int>(value));
  if (v == nullptr) return std::to_string(static_cast<int>(value));
  return ShortEnumName(*v);
}

}  // namespace accelopt::core

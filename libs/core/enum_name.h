// Short names of proto enum values for people: VERDICT_OK -> "OK", JOB_STATE_RUNNING -> "RUNNING".
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/generated_enum_reflection.h>

#include <string>

namespace accelopt::core {

// The value's name without its enum's prefix (the first value's name minus "UNSPECIFIED", per our proto
// style); the number as text for a value the enum does not define.
template <typename Enum>
std::string ShortEnumName(Enum value) {
  const google::protobuf::EnumDescriptor* desc = google::protobuf::GetEnumDescriptor<Enum>();
  const google::protobuf::EnumValueDescriptor* v = desc->FindValueByNumber(static_cast<int>(value));
  if (v == nullptr) return std::to_string(static_cast<int>(value));
  std::string prefix = desc->value(0)->name();
  prefix = prefix.substr(0, prefix.rfind("UNSPECIFIED"));
  const std::string& name = v->name();
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

}  // namespace accelopt::core

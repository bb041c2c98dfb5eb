// JSON as the CLI prints it: objects with sorted keys, so the same data always gives the same bytes, and
// protobuf messages in their proto3 JSON form with the proto (snake_case) field names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "google/protobuf/message.h"

namespace accelopt::cli {

// Every field of `message` (defaults included) by its proto name, as protobuf's JSON printer writes it,
// except that 64-bit integers are numbers rather than strings, enum values are short names ("SUCCEEDED",
// "SIM_TRN1"; null for the UNSPECIFIED value) and unset `optional` scalars are null. Unset sub-messages are
// left out. google.protobuf.Struct contents keep their JSON form.
nlohmann::json ProtoToJson(const google::protobuf::Message& message);

// `value` as text with sorted keys: on one line, or indented by two spaces when `pretty`.
std::string JsonText(const nlohmann::json& value, bool pretty);

}  // namespace accelopt::cli

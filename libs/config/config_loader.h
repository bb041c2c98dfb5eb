// Loads JSON or YAML text into a protobuf message. Unknown keys are rejected with their dotted path, enum
// values may be written as their proto name or in a friendly form ("sim-trn1" for DEVICE_SIM_TRN1,
// "fifo" for MEMORY_POLICY_FIFO), and errors name the source and the offending key.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace accelopt::config {

// Parses `text` (JSON or YAML) into `message`. `source` names the input in error messages.
// INVALID_ARGUMENT on syntax errors, unknown keys or values of the wrong type.
absl::Status ParseConfigText(absl::string_view text, absl::string_view source, google::protobuf::Message* message);

// Like ParseConfigText, but also accepts the keys named in `extra_keys` (dotted paths such as
// "problem.kernel") although the message has no such field: their values, which must be single values, are
// returned by path instead of being parsed into `message` (e.g. file paths the caller reads itself).
absl::StatusOr<std::map<std::string, std::string>> ParseConfigTextWithExtraKeys(absl::string_view text,
                                                                                absl::string_view source,
                                                                                const std::set<std::string>& extra_keys,
                                                                                google::protobuf::Message* message);

// Reads `path` and parses it. NOT_FOUND when the file is missing.
absl::Status LoadConfigFile(const std::string& path, google::protobuf::Message* message);

// Renders `message` as compact JSON (proto field names), for logging the effective config.
std::string ToJson(const google::protobuf::Message& message);

}  // namespace accelopt::config

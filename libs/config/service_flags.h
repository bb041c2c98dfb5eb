// Command-line flags shared by every service binary (--config, --port, --admin_port, --log_level) and the
// start-up sequence that turns them into a validated config.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/config.pb.h"
#include "google/protobuf/message.h"

namespace accelopt::config {

// Parses argv with absl flags. `--help` (or -h) prints `usage` and the project's flags and exits 0;
// unknown flags exit 1 with one line naming the flag.
void ParseServiceFlags(int argc, char** argv, absl::string_view usage);

// Loads --config (JSON or YAML) into `config` when the flag is given.
absl::Status LoadConfigFromFlag(google::protobuf::Message* config);

// Fills server defaults, then applies --port, --admin_port and --log_level, then validates.
absl::Status ApplyServerFlags(v1::ServerConfig* server);

// Both of the above, for a service config with a `server` field.
template <typename Config>
absl::Status LoadServiceConfig(Config* config) {
  if (absl::Status s = LoadConfigFromFlag(config); !s.ok()) return s;
  return ApplyServerFlags(config->mutable_server());
}

}  // namespace accelopt::config

#include "libs/config/service_flags.h"

#include <cstdio>
#include <iostream>
#include <map>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libs/config/config_loader.h"
#include "libs/config/validate.h"
#include "libs/core/status_macros.h"

ABSL_FLAG(std::string, config, "", "Path of the service config, JSON or YAML (none: built-in defaults)");
ABSL_FLAG(int, port, -1, "gRPC port on the config's host (overrides server.grpc_address; 0 = any free port)");
ABSL_FLAG(int, admin_port, -1, "Prometheus /metrics port (overrides server.admin_address; 0 = any free port)");
ABSL_FLAG(std::string, log_level, "", "debug, info, warning or error (overrides server.log_level)");

namespace accelopt::config {
namespace {

bool IsProjectFlag(absl::string_view file) {
  return absl::StrContains(file, "libs/") || absl::StrContains(file, "services/") || absl::StrContains(file, "cli/");
}

void PrintHelp(absl::string_view usage) {
  std::cout << usage << "\n\nFlags:\n";
  std::map<std::string, const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsProjectFlag(flag->Filename())) flags[std::string(name)] = flag;
  }
  for (const auto& [name, flag] : flags) {
    // "" and -1 mean "not given: the config file's value", which the help text already says.
    const std::string def = flag->DefaultValue();
    std::cout << "  --" << name << "  " << flag->Help();
    if (!def.empty() && def != "-1") std::cout << " (default: \"" << def << "\")";
    std::cout << "\n";
  }
  std::cout << "  --help  Show this help and exit\n";
}

std::string ReplacePort(const std::string& address, int port) {
  auto colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.empty()) host = "127.0.0.1";
  return absl::StrCat(host, ":", port);
}

}  // namespace

void ParseServiceFlags(int argc, char** argv, absl::string_view usage) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull") {
      PrintHelp(usage);
      std::exit(0);
    }
  }
  absl::SetProgramUsageMessage(usage);
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = IsProjectFlag;
  usage_config.contains_helpshort_flags = IsProjectFlag;
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 1) {
    std::fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", argv[0], positional[1]);
    std::exit(2);
  }
}

absl::Status LoadConfigFromFlag(google::protobuf::Message* config) {
  std::string path = absl::GetFlag(FLAGS_config);
  if (path.empty()) return absl::OkStatus();
  return LoadConfigFile(path, config);
}

absl::Status ApplyServerFlags(v1::ServerConfig* server) {
  ApplyServerDefaults(server);
  if (int port = absl::GetFlag(FLAGS_port); port >= 0) {
    server->set_grpc_address(ReplacePort(server->grpc_address(), port));
  }
  if (int port = absl::GetFlag(FLAGS_admin_port); port >= 0) {
    server->set_admin_address(ReplacePort(server->admin_address(), port));
  }
  if (std::string level = absl::GetFlag(FLAGS_log_level); !level.empty()) {
    server->set_log_level(level);
  }
  return ValidateServerConfig(*server);
}

}  // namespace accelopt::config

#include "cli/cluster_commands.h"

#include <filesystem>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/args.h"
#include "cli/json_output.h"
#include "cli/local_cluster.h"
#include "cli/secure_cluster.h"
#include "libs/config/config_loader.h"
#include "services/profiler/backend_registry.h"

namespace accelopt::cli {
namespace {

std::string SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

int RunUp(const std::vector<std::string>& argv) {
  auto args = ParseArgs(argv, {"data-dir", "config", "profilers", "base-port", "device"}, {"secure", "json"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  v1::ClusterConfig config;
  if (std::string path = args->Get("config"); !path.empty()) {
    if (auto s = config::LoadConfigFile(path, &config); !s.ok()) return Fail(std::string(s.message()));
  }
  if (args->values.count("data-dir")) config.set_data_dir(args->Get("data-dir"));
  if (args->values.count("profilers")) {
    int n = 0;
    if (!absl::SimpleAtoi(args->Get("profilers"), &n) || n < 1 || n > 64) {
      return UsageError("--profilers must be a number from 1 to 64");
    }
    config.set_profilers(n);
  }
  if (args->values.count("base-port")) {
    int p = 0;
    if (!absl::SimpleAtoi(args->Get("base-port"), &p) || p < 1024 || p > 65000) {
      return UsageError("--base-port must be a number from 1024 to 65000");
    }
    config.set_base_port(p);
  }
  if (args->values.count("device")) {
    auto device = profiler::BuiltinBackends().ParseDevice(args->Get("device"));
    if (!device.ok()) return UsageError(absl::StrCat("--device: ", device.status().message()));
    config.set_device(*device);
  }
  ApplyClusterDefaults(&config, SelfDir());
  // With --json the progress goes to stderr and stdout gets the cluster's status as `status --json` prints it.
  const bool json = args->Has("json");
  if (auto s = Up(config, json ? std::cerr : std::cout, args->Has("secure")); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (json) return Status(config.data_dir(), std::cout, /*json=*/true).ok() ? 0 : 1;
  return 0;
}

int RunWithDataDir(const std::vector<std::string>& argv, bool down) {
  auto args = ParseArgs(argv, {"data-dir"}, {"json"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  std::string data_dir = args->Get("data-dir", "./.accelopt");
  const bool json = args->Has("json");
  if (!down) {
    absl::Status s = Status(data_dir, std::cout, json);
    return s.ok() ? 0 : Fail(std::string(s.message()));
  }
  // With --json the progress goes to stderr and stdout gets one object.
  absl::Status s = Down(data_dir, json ? std::cerr : std::cout);
  if (!s.ok()) return Fail(std::string(s.message()));
  if (json) std::cout << JsonText({{"data_dir", data_dir}, {"stopped", true}}, /*pretty=*/false) << "\n";
  return 0;
}

int RunToken(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] != "create") return UsageError("token: the only verb is `create`");
  auto args = ParseArgs({argv.begin() + 1, argv.end()}, {"data-dir", "tenant", "role"}, {"json"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  if (args->Get("tenant").empty()) return UsageError("token create needs --tenant T");
  auto token = CreateToken(args->Get("data-dir", "./.accelopt"), args->Get("tenant"), args->Get("role", "submitter"));
  if (absl::IsInvalidArgument(token.status())) return UsageError(std::string(token.status().message()));
  if (!token.ok()) return Fail(std::string(token.status().message()));
  if (args->Has("json")) {
    std::cout << JsonText(
                     {{"token", *token}, {"tenant", args->Get("tenant")}, {"role", args->Get("role", "submitter")}},
                     /*pretty=*/false)
              << "\n";
    return 0;
  }
  std::cout << *token << "\n";
  return 0;
}

}  // namespace

Command UpCommand() {
  return {
      "up",
      absl::StrCat("up [--data-dir DIR] [--config FILE] [--profilers N] [--base-port N] [--secure] [--json] [--device ",
                   absl::StrJoin(profiler::BuiltinBackends().Names(), "|"),
                   "]\n"
                   "      Start every service of the local cluster that is not running; wait until SERVING.\n"
                   "      While some of its services run, a crashed one restarts on its recorded address with\n"
                   "      its recorded config (DIR/config/NAME.yaml), whatever the other flags say.\n"
                   "      --profilers: worker processes (default 1); a running cluster keeps its number.\n"
                   "      --secure: a CA, service certificates and an admin token in DIR/tls; TLS everywhere,\n"
                   "      mutual TLS inside, bearer tokens on the public APIs, audit logs in DIR/audit.\n"
                   "      --json: progress on stderr, then the status as `status --json` prints it."),
      RunUp};
}

Command DownCommand() {
  return {"down",
          "down [--data-dir DIR] [--json]\n      Stop the local cluster (SIGTERM, SIGKILL after the drain deadline).",
          [](const std::vector<std::string>& a) { return RunWithDataDir(a, true); }};
}

Command StatusCommand() {
  return {
      "status",
      "status [--data-dir DIR] [--json]\n      Health, address, version and pid of each service; exit 1 if one is not "
      "SERVING.",
      [](const std::vector<std::string>& a) { return RunWithDataDir(a, false); }};
}

Command TokenCommand() {
  return {"token",
          "token create --tenant T [--role viewer|submitter|admin] [--json] [--data-dir DIR]\n"
          "      Print a new bearer token (default role submitter) and add its hash to DIR/tls/tokens.yaml.",
          RunToken};
}

}  // namespace accelopt::cli

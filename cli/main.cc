// accelopt: the command-line client of the AccelOpt cluster.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/local_cluster.h"
#include "libs/config/config_loader.h"
#include "libs/core/version.h"

namespace {

constexpr char kUsage[] = R"(accelopt: optimize NKI kernels for AWS Trainium with an AccelOpt cluster.

Usage: accelopt <command> [options]

Local cluster (all services as processes on 127.0.0.1):
  up      [--data-dir DIR] [--config FILE] [--profilers N] [--base-port N] [--device sim-trn1|sim-trn2]
          Start every service that is not running, wait until each is SERVING, print addresses.
  down    [--data-dir DIR]   Stop the cluster (SIGTERM, then SIGKILL after the drain deadline).
  status  [--data-dir DIR]   Health, address, version and pid of each service; exit 1 if one is not SERVING.

Other:
  version                    Print the version.
  help                       Show this help.

DIR defaults to ./.accelopt. FILE is an accelopt.v1.ClusterConfig in YAML or JSON (docs/configuration.md).
Exit codes: 0 success, 1 failure (one line on stderr), 2 bad usage.
)";

int UsageError(const std::string& message) {
  std::cerr << "accelopt: " << message << " (see accelopt help)\n";
  return 2;
}

int Fail(const absl::Status& status) {
  std::cerr << "accelopt: error: " << status.message() << "\n";
  return 1;
}

std::string SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

int RunUp(const std::vector<std::string>& argv) {
  auto args = accelopt::cli::ParseArgs(
      argv, {"data-dir", "config", "profilers", "base-port", "device"}, {});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  accelopt::v1::ClusterConfig config;
  if (std::string path = args->Get("config"); !path.empty()) {
    if (auto s = accelopt::config::LoadConfigFile(path, &config); !s.ok()) return Fail(s);
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
    std::string d = args->Get("device");
    if (d == "sim-trn1") config.set_device(accelopt::v1::DEVICE_SIM_TRN1);
    else if (d == "sim-trn2") config.set_device(accelopt::v1::DEVICE_SIM_TRN2);
    else if (d == "neuron") config.set_device(accelopt::v1::DEVICE_NEURON);
    else return UsageError("--device must be sim-trn1, sim-trn2 or neuron");
  }
  accelopt::cli::ApplyClusterDefaults(&config, SelfDir());
  if (auto s = accelopt::cli::Up(config, std::cout); !s.ok()) return Fail(s);
  return 0;
}

int RunDataDirCommand(const std::string& command, const std::vector<std::string>& argv) {
  auto args = accelopt::cli::ParseArgs(argv, {"data-dir"}, {});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  std::string data_dir = args->Get("data-dir", "./.accelopt");
  absl::Status s = command == "down" ? accelopt::cli::Down(data_dir, std::cout)
                                     : accelopt::cli::Status(data_dir, std::cout);
  return s.ok() ? 0 : Fail(s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  for (const auto& a : rest) {
    if (a == "--help" || a == "-h") command = "help";
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "version" || command == "--version") {
    std::cout << "accelopt " << accelopt::core::kVersion << "\n";
    return 0;
  }
  if (command == "up") return RunUp(rest);
  if (command == "down" || command == "status") return RunDataDirCommand(command, rest);
  return UsageError("unknown command '" + command + "'");
}

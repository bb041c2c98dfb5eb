// accelopt: the command-line client of the AccelOpt cluster.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/candidates_command.h"
#include "cli/cluster_commands.h"
#include "cli/command.h"
#include "cli/health_command.h"
#include "cli/job_commands.h"
#include "cli/json_output.h"
#include "cli/memory_commands.h"
#include "cli/profile_command.h"
#include "cli/report_command.h"
#include "cli/suggest.h"
#include "cli/suite_command.h"
#include "libs/core/version.h"

namespace accelopt::cli {
namespace {

// Every command, in the order `help` lists them.
std::vector<Command> Commands() {
  return {UpCommand(),      DownCommand(),   StatusCommand(), SubmitCommand(), WatchCommand(),      GetCommand(),
          ListCommand(),    CancelCommand(), ExportCommand(), ReportCommand(), CandidatesCommand(), SuiteCommand(),
          ProfileCommand(), MemoryCommand(), TokenCommand(),  HealthCommand()};
}

constexpr char kCommonOptions[] =
    "\nCommands that call a service also take --token T, --ca FILE, --cert FILE --key FILE (defaults:\n"
    "$ACCELOPT_TOKEN, $ACCELOPT_CA, else DIR/tls of an `up --secure` cluster); --server defaults to\n"
    "$ACCELOPT_SERVER. A token is sent only over TLS.\n"
    "\nDIR defaults to ./.accelopt. Exit codes: 0 success, 1 failure (one line on stderr), 2 bad usage;\n"
    "submit --wait and watch exit 0 when the job SUCCEEDED, 1 when it FAILED, 3 when it was CANCELLED.\n";

void PrintUsage(std::ostream& out) {
  out << "accelopt: optimize NKI kernels for AWS Trainium with an AccelOpt cluster.\n\n"
      << "Usage: accelopt <command> [options]   (accelopt <command> --help for one command)\n\nCommands:\n";
  for (const Command& c : Commands()) out << "  " << c.usage << "\n";
  out << "  version [--json]\n      Print the version.\n" << kCommonOptions;
}

void PrintCommandUsage(const Command& command, std::ostream& out) {
  out << "Usage: accelopt " << command.usage << "\n" << kCommonOptions;
}

const Command* FindCommand(const std::string& name) {
  static const std::vector<Command>* commands = new std::vector<Command>(Commands());
  for (const Command& c : *commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int UnknownCommand(const std::string& name) {
  std::vector<std::string> names = {"help", "version"};
  for (const Command& c : Commands()) names.push_back(c.name);
  std::optional<std::string> guess = ClosestMatch(name, names);
  return UsageError("unknown command '" + name + "'" + (guess.has_value() ? "; did you mean '" + *guess + "'?" : ""));
}

}  // namespace
}  // namespace accelopt::cli

int main(int argc, char** argv) {
  using namespace accelopt::cli;
  // Progress reaches a pipe or a log file line by line, as it does a terminal.
  if (isatty(STDOUT_FILENO) == 0) setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (name == "help" || name == "--help" || name == "-h") {
    if (rest.empty()) {
      PrintUsage(std::cout);
      return 0;
    }
    const Command* command = FindCommand(rest[0]);
    if (command == nullptr) return UnknownCommand(rest[0]);
    PrintCommandUsage(*command, std::cout);
    return 0;
  }
  if (name == "version" || name == "--version") {
    if (!rest.empty() && rest[0] == "--json") {
      std::cout << JsonText({{"version", accelopt::core::kVersion}}, /*pretty=*/false) << "\n";
    } else {
      std::cout << "accelopt " << accelopt::core::kVersion << "\n";
    }
    return 0;
  }
  const Command* command = FindCommand(name);
  if (command == nullptr) return UnknownCommand(name);
  for (const auto& a : rest) {
    if (a == "--help" || a == "-h") {
      PrintCommandUsage(*command, std::cout);
      return 0;
    }
  }
  return command->run(rest);
}

// accelopt: the command-line client of the AccelOpt cluster.
#include <iostream>
#include <string>
#include <vector>

#include "cli/candidates_command.h"
#include "cli/cluster_commands.h"
#include "cli/command.h"
#include "cli/job_commands.h"
#include "cli/memory_commands.h"
#include "cli/profile_command.h"
#include "cli/report_command.h"
#include "cli/suite_command.h"
#include "libs/core/version.h"

namespace accelopt::cli {
namespace {

// Every command, in the order `help` lists them.
std::vector<Command> Commands() {
  return {UpCommand(),         DownCommand(),  StatusCommand(),  SubmitCommand(), WatchCommand(),
          GetCommand(),        ListCommand(),  CancelCommand(),  ExportCommand(), ReportCommand(),
          CandidatesCommand(), SuiteCommand(), ProfileCommand(), MemoryCommand(), TokenCommand()};
}

void PrintUsage(std::ostream& out) {
  out << "accelopt: optimize NKI kernels for AWS Trainium with an AccelOpt cluster.\n\n"
      << "Usage: accelopt <command> [options]\n\nCommands:\n";
  for (const Command& c : Commands()) out << "  " << c.usage << "\n";
  out << "  version\n      Print the version.\n"
      << "\nCommands that call a service also take --token T, --ca FILE, --cert FILE --key FILE (defaults:\n"
      << "$ACCELOPT_TOKEN, $ACCELOPT_CA, else DIR/tls of an `up --secure` cluster); --server defaults to\n"
      << "$ACCELOPT_SERVER. A token is sent only over TLS.\n"
      << "\nDIR defaults to ./.accelopt. Exit codes: 0 success, 1 failure (one line on stderr), 2 bad usage;\n"
      << "submit --wait and watch exit 0 when the job SUCCEEDED, 1 when it FAILED, 3 when it was CANCELLED.\n";
}

}  // namespace
}  // namespace accelopt::cli

int main(int argc, char** argv) {
  using namespace accelopt::cli;
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  bool help = name == "help" || name == "--help" || name == "-h";
  for (const auto& a : rest) help = help || a == "--help" || a == "-h";
  if (help) {
    PrintUsage(std::cout);
    return 0;
  }
  if (name == "version" || name == "--version") {
    std::cout << "accelopt " << accelopt::core::kVersion << "\n";
    return 0;
  }
  for (const Command& c : Commands()) {
    if (c.name == name) return c.run(rest);
  }
  return UsageError("unknown command '" + name + "'");
}

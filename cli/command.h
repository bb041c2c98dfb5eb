// One `accelopt` subcommand: its name, one-line usage, and the function that runs it.
#pragma once

#include <string>
#include <vector>

namespace accelopt::cli {

struct Command {
  // e.g. "up", or "memory" for a command with sub-verbs.
  std::string name;
  // Usage lines shown by `accelopt help`, each "name args  description".
  std::string usage;
  // Runs with the arguments after the command name; returns the exit code
  // (0 success, 1 failure after printing "accelopt: error: ..." on stderr, 2 bad usage).
  int (*run)(const std::vector<std::string>& args);
};

// Prints "accelopt: <message> (see accelopt help)" and returns 2.
int UsageError(const std::string& message);
// Prints "accelopt: error: <message>" and returns 1.
int Fail(const std::string& message);

}  // namespace accelopt::cli

#include "cli/command.h"

#include <iostream>

namespace accelopt::cli {

int UsageError(const std::string& message) {
  std::cerr << "accelopt: " << message << " (see accelopt help)\n";
  return 2;
}

int Fail(const std::string& message) {
  std::cerr << "accelopt: error: " << message << "\n";
  return 1;
}

}  // namespace accelopt::cli

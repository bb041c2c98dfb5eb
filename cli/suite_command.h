// `accelopt suite run|compare|import-nkibench`: benchmark suites in one command.
#pragma once

#include "cli/command.h"

namespace accelopt::cli {

Command SuiteCommand();

}  // namespace accelopt::cli

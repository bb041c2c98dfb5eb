// `accelopt memory list | export | import`: the optimization memory of a running memory service.
#pragma once

#include <string>

#include "cli/command.h"

namespace accelopt::cli {

Command MemoryCommand();

}  // namespace accelopt::cli

// `accelopt up`, `down` and `status`: the local cluster.
#pragma once

#include "cli/command.h"

namespace accelopt::cli {

Command UpCommand();
Command DownCommand();
Command StatusCommand();
Command TokenCommand();

}  // namespace accelopt::cli

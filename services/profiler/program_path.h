// Start-up checks that a program a backend or the sandbox needs can be run.
#pragma once

#include <string>

namespace accelopt::profiler {

// True when `program` can be executed: a path containing '/' that is executable, or a name found executable
// on $PATH (as execvp resolves it; /usr/bin:/bin when PATH is unset).
bool IsExecutableOnPath(const std::string& program);

}  // namespace accelopt::profiler

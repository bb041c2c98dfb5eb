// Where a binary finds its read-only resources (prompts, profiler harness, builtin rewriter) without any path of
// the build machine compiled in. Installed layout: <prefix>/bin/<binary> and <prefix>/share/accelopt/<name>.
// A build tree mirrors it: <build>/bin/ and <build>/share/accelopt/<name> (symlinks into the source tree that CMake
// creates at configure time), so a binary run from a build tree finds the sources the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace accelopt::core {

// The data roots to search, in order: $ACCELOPT_DATA_DIR; <directory of /proc/self/exe>/../share/accelopt;
// $ACCELOPT_BIN_DIR/../share/accelopt (test binaries, which do not live in bin/). Unset variables are skipped.
std::vector<std::string> DataRoots();

// The first <root>/<name> of DataRoots() that holds `marker` (a file or directory name), canonical with symlinks
// resolved. When none does, <exe dir>/../share/accelopt/<name>, so that a readiness error names the expected place.
std::string FindResourceDir(std::string_view name, std::string_view marker);

}  // namespace accelopt::core

#include "services/profiler/program_path.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_split.h"

namespace accelopt::profiler {

bool IsExecutableOnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "/usr/bin:/bin" : path, ':', absl::SkipEmpty())) {
    if (access((std::string(dir) + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace accelopt::profiler

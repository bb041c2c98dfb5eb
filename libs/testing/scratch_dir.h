// A test's own scratch directory: a fresh directory under ::testing::TempDir() (TEST_TMPDIR, else TMPDIR, else
// /tmp), removed with everything in it when this is destroyed. When the test (or, for a directory a whole suite or
// the program holds, the suite or the run) has failed, the directory is kept and its path printed, for whoever
// debugs the failure.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

namespace accelopt::testing {

class ScratchDir {
 public:
  // Creates TempDir()/<name>_XXXXXX with `mode` (0700; sandboxed users of the directory need at least 0711).
  // An empty `name` stands for the running test's <Suite>.<Test> ("scratch" outside a test). A directory that
  // cannot be created fails the current test; path() is then empty.
  explicit ScratchDir(std::string_view name = "", mode_t mode = 0700);
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::string& path() const { return path_; }
  // Keeps the directory (and prints its path) however the test ends: for a failure the test has not seen yet,
  // such as a helper's error status the test will assert on after the helper is gone.
  void Keep() { keep_ = true; }
  // path()/relative.
  std::string Path(std::string_view relative) const { return path_ + "/" + std::string(relative); }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace accelopt::testing

// Starts a program as a child process with its output in a file, for tests that run real binaries.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accelopt::testing {

class ChildProcess {
 public:
  // Starts `argv[0]` (a path) with `argv`; stdout and stderr go to `log_path`.
  static absl::StatusOr<ChildProcess> Start(const std::vector<std::string>& argv, const std::string& log_path);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  // Kills the process (SIGKILL) if it is still running.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  // Waits until the process exits or `timeout` passes. Returns the raw wait status, or nullopt on timeout.
  std::optional<int> WaitForExit(std::chrono::milliseconds timeout);
  // The output written so far.
  std::string Output() const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
};

// A TCP port on 127.0.0.1 in 10000-19999 that was free a moment ago and that this process was not given before
// (0 if none was found). Thread-safe.
int PickFreePort();

// Waits until the gRPC health service at `address` reports SERVING. DEADLINE_EXCEEDED otherwise.
absl::Status WaitForServing(const std::string& address, std::chrono::milliseconds timeout);

}  // namespace accelopt::testing

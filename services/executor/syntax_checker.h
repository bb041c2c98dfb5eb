// Whether a Python module parses: Debian's /usr/bin/python3 runs ast.parse on it in a subprocess.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace accelopt::executor {

// Blocking (tens of milliseconds): call from a worker thread, never a gRPC or io thread. Thread-safe.
class SyntaxChecker {
 public:
  virtual ~SyntaxChecker() = default;
  // OK when `source` parses; INVALID_ARGUMENT "line N: <message>" when it does not; UNAVAILABLE when the
  // check itself could not run (no interpreter, crash, timeout).
  virtual absl::Status Check(absl::string_view source) const = 0;
};

// Runs `python -c <ast.parse of stdin>` with `timeout`, killing the child when it passes.
class PythonSyntaxChecker final : public SyntaxChecker {
 public:
  explicit PythonSyntaxChecker(std::string python = "/usr/bin/python3", absl::Duration timeout = absl::Seconds(10))
      : python_(std::move(python)), timeout_(timeout) {}
  absl::Status Check(absl::string_view source) const override;

 private:
  const std::string python_;
  const absl::Duration timeout_;
};

}  // namespace accelopt::executor

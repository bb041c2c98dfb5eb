// Keeps the first and last bytes of a stream of unbounded length, counting what lies between.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace accelopt::sandbox {

class BoundedOutput {
 public:
  // Keeps at most `head_bytes` from the start and `tail_bytes` from the end.
  BoundedOutput(size_t head_bytes, size_t tail_bytes);

  void Append(absl::string_view data);

  // Everything appended when it fits; otherwise head + "\n[... N bytes dropped ...]\n" + tail.
  std::string Text() const;
  size_t total_bytes() const { return total_; }

 private:
  size_t head_limit_, tail_limit_;
  std::string head_;
  std::string tail_;  // ring buffer of the last tail_limit_ bytes once full
  size_t tail_start_ = 0;
  size_t total_ = 0;
};

}  // namespace accelopt::sandbox

#include "libs/sandbox/bounded_output.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace accelopt::sandbox {

BoundedOutput::BoundedOutput(size_t head_bytes, size_t tail_bytes) : head_limit_(head_bytes), tail_limit_(tail_bytes) {}

void BoundedOutput::Append(absl::string_view data) {
  total_ += data.size();
  size_t to_head = std::min(data.size(), head_limit_ - head_.size());
  head_.append(data.data(), to_head);
  data.remove_prefix(to_head);
  if (tail_limit_ == 0 || data.empty()) return;
  if (data.size() >= tail_limit_) {
    tail_.assign(data.data() + data.size() - tail_limit_, tail_limit_);
    tail_start_ = 0;
    return;
  }
  for (char c : data) {
    if (tail_.size() < tail_limit_) {
      tail_.push_back(c);
    } else {
      tail_[tail_start_] = c;
      tail_start_ = (tail_start_ + 1) % tail_limit_;
    }
  }
}

std::string BoundedOutput::Text() const {
  std::string tail = tail_.substr(tail_start_) + tail_.substr(0, tail_start_);
  const size_t dropped = total_ - head_.size() - tail.size();
  if (dropped == 0) return head_ + tail;
  return absl::StrCat(head_, "\n[... ", dropped, " bytes dropped ...]\n", tail);
}

}  // namespace accelopt::sandbox

#include "services/profiler/trainium/psum_banks.h"

#include <algorithm>

namespace accelopt::trainium {

PsumBanks::PsumBanks(int banks, int64_t bank_bytes)
    : bank_bytes_(std::max<int64_t>(bank_bytes, 1)),
      free_at_ns_(std::max(banks, 1), 0.0),
      holder_(std::max(banks, 1), -1) {}

double PsumBanks::Acquire(int32_t alloc, int64_t bytes_pp) {
  const int64_t needed = std::max<int64_t>(1, (bytes_pp + bank_bytes_ - 1) / bank_bytes_);
  std::vector<int> unheld;
  for (int bank = 0; bank < static_cast<int>(holder_.size()); ++bank) {
    if (holder_[bank] < 0) unheld.push_back(bank);
  }
  if (static_cast<int64_t>(unheld.size()) < needed) {
    ++overflows_;
    return 0;
  }
  std::stable_sort(unheld.begin(), unheld.end(), [this](int a, int b) { return free_at_ns_[a] < free_at_ns_[b]; });
  double ready = 0;
  for (int64_t k = 0; k < needed; ++k) {
    holder_[unheld[k]] = alloc;
    ready = std::max(ready, free_at_ns_[unheld[k]]);
  }
  return ready;
}

void PsumBanks::Release(int32_t alloc, double time_ns) {
  for (size_t bank = 0; bank < holder_.size(); ++bank) {
    if (holder_[bank] == alloc) {
      holder_[bank] = -1;
      free_at_ns_[bank] = time_ns;
    }
  }
}

}  // namespace accelopt::trainium

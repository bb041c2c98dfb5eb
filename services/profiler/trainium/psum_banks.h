// PSUM bank occupancy: a PSUM allocation (an accumulation group or an eviction source) holds whole
// 2 KiB banks from its first write until its last reader finishes, so at most `banks` groups are
// outstanding.
#pragma once

#include <cstdint>
#include <vector>

namespace accelopt::trainium {

// Not thread-safe; used by one scheduling pass.
class PsumBanks {
 public:
  PsumBanks(int banks, int64_t bank_bytes);

  // Gives allocation `alloc` ceil(bytes_pp / bank_bytes) banks (at least one), choosing the banks
  // that became free earliest, and returns the time (ns) from which all of them are free. When
  // fewer banks than needed are unheld (more groups live in program order than banks exist), the
  // allocation gets no banks, the call returns 0 and overflows() grows: the model does not stall on
  // a program the compiler would have to rearrange.
  double Acquire(int32_t alloc, int64_t bytes_pp);

  // Releases the banks held by `alloc` (no-op if it holds none); they are free from `time_ns` on.
  void Release(int32_t alloc, double time_ns);

  int64_t overflows() const { return overflows_; }

 private:
  int64_t bank_bytes_;
  std::vector<double> free_at_ns_;
  std::vector<int32_t> holder_;  // allocation holding each bank, -1 when none
  int64_t overflows_ = 0;
};

}  // namespace accelopt::trainium

// Ring buffering of loop-allocated SBUF tiles. Generated kernels write a fresh tensor per loop
// iteration, which in an unlimited-buffer model would pipeline perfectly; the compiler instead
// gives each declaration site a ring of a few physical buffers. The compiler allocates tensors, not
// blocks: the g-th tensor instance of a site is generation g, and block b of it reuses the buffer
// of block b of generation g - depth, so it must wait until that block has been read for the last
// time. A tile without block dimensions is a one-block tensor.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Not thread-safe; used by one scheduling pass.
class BufferRings {
 public:
  // Sites with at least two SBUF tensor instances get a ring of `depth` buffers per instance they
  // keep live at once, reduced (largest ring first) while the rings of all such sites (buffers x
  // largest tensor of the site) would not fit in `capacity_bytes_pp`. Only the allocations of
  // NeuronCore `core` are placed in these rings.
  BufferRings(const Trace& trace, int depth, double capacity_bytes_pp, int core = 0);

  // Places SBUF allocation `alloc` in its site's ring. Returns the time (ns) from which its slot is
  // free: the release time of the slot's previous occupant if that one was already released, else 0
  // (the compiler would need another buffer; the SBUF capacity model accounts for that).
  double Place(int32_t alloc);

  // Records that `alloc` was read or written for the last time at `time_ns`.
  void Release(int32_t alloc, double time_ns);

  // The smallest ring depth after fitting the rings into SBUF.
  int min_depth() const { return min_depth_; }

 private:
  struct Slot {
    int32_t occupant = -1;
    bool released = false;
    double released_at_ns = 0;
  };
  struct Ring {
    int depth = 1;
    absl::flat_hash_map<int64_t, int64_t> generation;              // tensor -> generation (order of first block)
    absl::node_hash_map<std::pair<int64_t, int32_t>, Slot> slots;  // (generation mod depth, block)
  };

  const Trace& trace_;
  int min_depth_ = 1;
  absl::flat_hash_map<int, Ring> rings_;         // by site
  absl::flat_hash_map<int32_t, Slot*> slot_of_;  // live allocation -> its slot (node_hash_map: stable)
};

}  // namespace accelopt::trainium

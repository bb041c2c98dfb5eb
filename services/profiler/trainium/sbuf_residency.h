// SBUF capacity by live allocations, with the compiler's answer to pressure (reference
// section 3.5). The compiler allocates whole tensors (declaration sites), not blocks, so when the
// live allocations exceed the usable SBUF it demotes a whole site: the one with most live bytes,
// among equals one whose live tiles all hold unmodified copies of HBM data. From then on the site's
// tiles are streamed: they take no SBUF space beyond a transient staging buffer; each write of
// computed data is saved to HBM (spill save), and each read re-loads the bytes it accesses
// (re-materialisation from the original HBM tensor for unmodified copies, a spill reload otherwise)
// unless the tile was written at most `reuse_window` instructions earlier (still staged). Loads
// from HBM into a streamed tile are elided: the data is fetched where it is used.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Not thread-safe; used by one scheduling pass. Allocation arguments are indices into
// Trace::allocations.
class SbufResidency {
 public:
  // `capacity_bytes_pp` is the usable SBUF per partition. Allocations used only by CSE-eliminated
  // instructions alias earlier results and take no space.
  SbufResidency(const Trace& trace, double capacity_bytes_pp, int reuse_window);

  // HBM traffic the model adds for one allocation.
  struct Transfer {
    enum class Kind { kSpillSave, kSpillReload, kRematerialize };
    int32_t alloc = 0;
    int64_t bytes = 0;  // whole transfer (bytes per partition times partitions)
    Kind kind = Kind::kSpillSave;
  };

  // Allocation `alloc` becomes live. Appends the spill saves of live modified tiles of any site
  // demoted to make room, and the indices of the tiles whose SBUF space the new allocation reuses
  // (`displaced`).
  void Allocate(int32_t alloc, std::vector<Transfer>* saves, std::vector<int32_t>* displaced);

  // True if instruction `inst` is a load from HBM into a streamed tile (the compiler drops it).
  bool Elided(const Instruction& inst) const;

  // Reloads needed before instruction `position` (not eliminated) can read its streamed operands.
  void BeforeInstruction(int32_t position, const Instruction& inst, std::vector<Transfer>* reloads) const;

  // Records the writes of instruction `position` after it was scheduled (`elided`: it was dropped,
  // see Elided); appends spill saves of computed data written into streamed tiles.
  void AfterInstruction(int32_t position, const Instruction& inst, bool elided, std::vector<Transfer>* saves);

  // Allocation `alloc` is freed.
  void Free(int32_t alloc);

  // True if `alloc` takes SBUF space in this model.
  bool Tracked(int32_t alloc) const { return state_[alloc].tracked; }

  double peak_live_bytes_pp() const { return peak_live_bytes_pp_; }
  int demoted_sites() const { return demoted_sites_; }

 private:
  struct State {
    bool tracked = false;   // SBUF allocation with at least one non-eliminated use
    bool live = false;      // between A and F, counted in live bytes
    bool streamed = false;  // its site was demoted
    bool written = false;
    bool hbm_copy = true;              // every write so far was a load from HBM
    int32_t last_write_position = -1;  // instruction of the latest executed write
  };
  struct Site {
    bool demoted = false;
    double live_bytes_pp = 0;
    std::vector<int32_t> live;  // live allocations of the site
  };

  // Bytes per partition of `alloc` that `inst` reads (or writes): the largest matching SBUF operand
  // that fits.
  int64_t AccessedBytesPp(const Instruction& inst, int32_t alloc, bool write) const;
  void Demote(int site, std::vector<Transfer>* saves, std::vector<int32_t>* displaced);

  const Trace& trace_;
  double capacity_bytes_pp_;
  int reuse_window_;
  std::vector<State> state_;
  absl::flat_hash_map<int, Site> sites_;
  double live_bytes_pp_ = 0;
  double peak_live_bytes_pp_ = 0;
  int demoted_sites_ = 0;
};

}  // namespace accelopt::trainium

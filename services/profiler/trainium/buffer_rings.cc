#include "services/profiler/trainium/buffer_rings.h"

#include <algorithm>
#include <cmath>

namespace accelopt::trainium {

BufferRings::BufferRings(const Trace& trace, int depth, double capacity_bytes_pp) : trace_(trace) {
  absl::flat_hash_map<int, std::pair<int64_t, int64_t>>
      sites;  // site -> (allocation count, largest bytes_pp)
  for (const Allocation& alloc : trace.allocations) {
    if (alloc.buffer != Buffer::kSbuf) continue;
    auto& [count, largest] = sites[alloc.site];
    ++count;
    largest = std::max(largest, alloc.bytes_pp);
  }
  double ring_bytes = 0;
  for (const auto& [site, stats] : sites) {
    if (stats.first >= 2) ring_bytes += static_cast<double>(stats.second);
  }
  depth_ = std::max(depth, 1);
  if (ring_bytes * depth_ > capacity_bytes_pp && ring_bytes > 0) {
    depth_ = std::max(1, static_cast<int>(std::floor(capacity_bytes_pp / ring_bytes)));
  }
  for (const auto& [site, stats] : sites) {
    if (stats.first >= 2) rings_[site].slots.resize(depth_);
  }
}

double BufferRings::Place(int32_t alloc) {
  auto it = rings_.find(trace_.allocations[alloc].site);
  if (it == rings_.end() || trace_.allocations[alloc].buffer != Buffer::kSbuf) return 0;
  Ring& ring = it->second;
  Slot& slot = ring.slots[ring.placed % ring.slots.size()];
  ++ring.placed;
  double ready = 0;
  if (slot.occupant >= 0) {
    if (!slot.released) {
      slot_of_.erase(slot.occupant);  // still live: this allocation gets an extra buffer instead
    } else {
      ready = slot.released_at_ns;
    }
  }
  slot = Slot{alloc, false, 0};
  slot_of_[alloc] = &slot;
  return ready;
}

void BufferRings::Release(int32_t alloc, double time_ns) {
  auto it = slot_of_.find(alloc);
  if (it == slot_of_.end()) return;
  it->second->released = true;
  it->second->released_at_ns = time_ns;
  slot_of_.erase(it);
}

}  // namespace accelopt::trainium

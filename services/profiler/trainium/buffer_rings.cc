#include "services/profiler/trainium/buffer_rings.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace accelopt::trainium {

BufferRings::BufferRings(const Trace& trace, int depth, double capacity_bytes_pp, int core) : trace_(trace) {
  // Bytes per partition and live range (from its first allocation to its `F`, in instruction
  // positions) of each SBUF tensor instance, then per site: (instances, largest instance).
  struct Instance {
    int64_t bytes_pp = 0;
    int32_t first = std::numeric_limits<int32_t>::max();
    int32_t last = -1;
  };
  absl::flat_hash_map<std::pair<int, int64_t>, Instance> tensors;  // (site, tensor)
  for (const Allocation& alloc : trace.allocations) {
    if (alloc.buffer != Buffer::kSbuf || alloc.core != core) continue;
    Instance& instance = tensors[{alloc.site, alloc.tensor}];
    instance.bytes_pp += alloc.bytes_pp;
    instance.first = std::min(instance.first, alloc.alloc_at);
    instance.last = std::max(instance.last, alloc.free_at);
  }
  absl::flat_hash_map<int, std::pair<int64_t, int64_t>> sites;
  absl::flat_hash_map<int, std::vector<std::pair<int32_t, int>>> events;  // site -> (position, +1 / -1)
  for (const auto& [key, instance] : tensors) {
    auto& [count, largest] = sites[key.first];
    ++count;
    largest = std::max(largest, instance.bytes_pp);
    events[key.first].emplace_back(instance.first, 1);
    events[key.first].emplace_back(std::max(instance.last, instance.first), -1);  // live in [first, last)
  }
  // Ring sites in a fixed order, each starting with `depth` buffers per instance the site keeps live
  // at once: a site that allocates a group of tiles per iteration (a Python list of K-tiles) gets
  // `depth` groups, as a site of one tile per iteration gets `depth` tiles.
  std::vector<std::pair<int, int64_t>> ring_sites;  // (site, largest bytes_pp)
  std::vector<int> depths;
  for (const auto& [site, stats] : sites) {
    if (stats.first >= 2) ring_sites.emplace_back(site, stats.second);
  }
  std::sort(ring_sites.begin(), ring_sites.end());
  for (const auto& [site, bytes] : ring_sites) {
    std::vector<std::pair<int32_t, int>>& site_events = events[site];
    std::sort(site_events.begin(), site_events.end());  // at one position, releases (-1) first
    int live = 0;
    int most = 0;
    for (const auto& [position, change] : site_events) {
      live += change;
      most = std::max(most, live);
    }
    depths.push_back(std::max(depth, 1) * std::max(most, 1));
  }
  double total = 0;
  for (size_t k = 0; k < ring_sites.size(); ++k) total += static_cast<double>(ring_sites[k].second) * depths[k];
  // While the rings do not fit, take one buffer from the site whose ring is largest (ties: lowest
  // site).
  while (total > capacity_bytes_pp) {
    size_t largest = ring_sites.size();
    double largest_bytes = 0;
    for (size_t k = 0; k < ring_sites.size(); ++k) {
      const double bytes = static_cast<double>(ring_sites[k].second) * depths[k];
      if (depths[k] > 1 && bytes > largest_bytes) {
        largest = k;
        largest_bytes = bytes;
      }
    }
    if (largest == ring_sites.size()) break;
    --depths[largest];
    total -= static_cast<double>(ring_sites[largest].second);
  }
  min_depth_ = depths.empty() ? std::max(depth, 1) : *std::min_element(depths.begin(), depths.end());
  for (size_t k = 0; k < ring_sites.size(); ++k) rings_[ring_sites[k].first].depth = depths[k];
}

double BufferRings::Place(int32_t alloc) {
  auto it = rings_.find(trace_.allocations[alloc].site);
  if (it == rings_.end() || trace_.allocations[alloc].buffer != Buffer::kSbuf) return 0;
  Ring& ring = it->second;
  const Allocation& a = trace_.allocations[alloc];
  const int64_t generation = ring.generation.try_emplace(a.tensor, ring.generation.size()).first->second;
  Slot& slot = ring.slots[{generation % ring.depth, a.block}];
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

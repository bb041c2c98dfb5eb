#include "services/profiler/trainium/sbuf_residency.h"

#include <algorithm>

namespace accelopt::trainium {
namespace {

bool IsLoadFromHbm(const Instruction& inst) {
  if (inst.op == Op::kLoad) return true;
  return inst.op == Op::kDmaCopy && !inst.inputs.empty() && inst.inputs[0].buffer == Buffer::kHbm;
}

}  // namespace

SbufResidency::SbufResidency(const Trace& trace, double capacity_bytes_pp, int reuse_window)
    : trace_(trace),
      capacity_bytes_pp_(capacity_bytes_pp),
      reuse_window_(reuse_window),
      state_(trace.allocations.size()) {
  for (const Instruction& inst : trace.instructions) {
    if (inst.cse) continue;
    for (int32_t a : inst.read_allocs) state_[a].tracked = true;
    for (int32_t a : inst.write_allocs) state_[a].tracked = true;
  }
  for (size_t a = 0; a < state_.size(); ++a) {
    if (trace.allocations[a].buffer != Buffer::kSbuf) state_[a].tracked = false;
  }
}

void SbufResidency::Demote(int site_id, std::vector<Transfer>* saves, std::vector<int32_t>* displaced) {
  Site& site = sites_[site_id];
  site.demoted = true;
  ++demoted_sites_;
  for (int32_t a : site.live) {
    State& s = state_[a];
    const Allocation& alloc = trace_.allocations[a];
    s.streamed = true;
    s.live = false;
    live_bytes_pp_ -= static_cast<double>(alloc.bytes_pp);
    displaced->push_back(a);
    if (s.written && !s.hbm_copy) {
      saves->push_back({a, alloc.bytes_pp * alloc.partitions, Transfer::Kind::kSpillSave});
    }
  }
  site.live.clear();
  site.live_bytes_pp = 0;
}

void SbufResidency::Allocate(int32_t alloc, std::vector<Transfer>* saves, std::vector<int32_t>* displaced) {
  State& s = state_[alloc];
  if (!s.tracked) return;
  const Allocation& a = trace_.allocations[alloc];
  Site& site = sites_[a.site];
  if (site.demoted) {
    s.streamed = true;
    return;
  }
  s.live = true;
  site.live.push_back(alloc);
  site.live_bytes_pp += static_cast<double>(a.bytes_pp);
  live_bytes_pp_ += static_cast<double>(a.bytes_pp);
  while (live_bytes_pp_ > capacity_bytes_pp_) {
    // Victim: the site with most live bytes; among equals one holding only unmodified HBM copies
    // (cheapest to re-load), then the lowest site id.
    int victim = 0;
    bool found = false;
    bool victim_clean = false;
    double victim_bytes = 0;
    for (const auto& [id, candidate] : sites_) {
      if (candidate.demoted || candidate.live.empty()) continue;
      const bool clean = std::all_of(candidate.live.begin(), candidate.live.end(),
                                     [this](int32_t x) { return state_[x].written && state_[x].hbm_copy; });
      const bool better = !found || candidate.live_bytes_pp > victim_bytes ||
                          (candidate.live_bytes_pp == victim_bytes &&
                           ((clean && !victim_clean) || (clean == victim_clean && id < victim)));
      if (better) {
        found = true;
        victim = id;
        victim_clean = clean;
        victim_bytes = candidate.live_bytes_pp;
      }
    }
    if (!found) break;
    Demote(victim, saves, displaced);
  }
  peak_live_bytes_pp_ = std::max(peak_live_bytes_pp_, live_bytes_pp_);
}

int64_t SbufResidency::AccessedBytesPp(const Instruction& inst, int32_t alloc, bool write) const {
  const int64_t whole = trace_.allocations[alloc].bytes_pp;
  if (write) {
    return inst.has_output && inst.output.buffer == Buffer::kSbuf ? std::min(inst.output.bytes_pp, whole) : whole;
  }
  int64_t best = 0;
  for (const Operand& operand : inst.inputs) {
    if (operand.buffer == Buffer::kSbuf && operand.bytes_pp <= whole) best = std::max(best, operand.bytes_pp);
  }
  return best > 0 ? best : whole;
}

bool SbufResidency::Elided(const Instruction& inst) const {
  if (!IsLoadFromHbm(inst) || inst.write_allocs.empty()) return false;
  return std::all_of(inst.write_allocs.begin(), inst.write_allocs.end(),
                     [this](int32_t a) { return state_[a].tracked && state_[a].streamed; });
}

void SbufResidency::BeforeInstruction(int32_t position, const Instruction& inst, std::vector<Transfer>* reloads) const {
  for (int32_t a : inst.read_allocs) {
    const State& s = state_[a];
    if (!s.tracked || !s.streamed || !s.written) continue;
    // Data written shortly before is still in the staging buffer.
    if (s.last_write_position >= 0 && position - s.last_write_position <= reuse_window_) continue;
    const int64_t bytes = AccessedBytesPp(inst, a, false) * trace_.allocations[a].partitions;
    reloads->push_back({a, bytes, s.hbm_copy ? Transfer::Kind::kRematerialize : Transfer::Kind::kSpillReload});
  }
}

void SbufResidency::AfterInstruction(int32_t position, const Instruction& inst, bool elided,
                                     std::vector<Transfer>* saves) {
  const bool from_hbm = IsLoadFromHbm(inst);
  for (int32_t a : inst.write_allocs) {
    State& s = state_[a];
    if (!s.tracked) continue;
    s.written = true;
    s.last_write_position = elided ? -1 : position;
    if (!from_hbm) s.hbm_copy = false;
    if (s.streamed && !from_hbm) {
      saves->push_back(
          {a, AccessedBytesPp(inst, a, true) * trace_.allocations[a].partitions, Transfer::Kind::kSpillSave});
    }
  }
}

void SbufResidency::Free(int32_t alloc) {
  State& s = state_[alloc];
  if (!s.live) return;
  s.live = false;
  const Allocation& a = trace_.allocations[alloc];
  Site& site = sites_[a.site];
  site.live.erase(std::find(site.live.begin(), site.live.end(), alloc));
  site.live_bytes_pp -= static_cast<double>(a.bytes_pp);
  live_bytes_pp_ -= static_cast<double>(a.bytes_pp);
}

}  // namespace accelopt::trainium

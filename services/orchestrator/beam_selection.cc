#include "services/orchestrator/beam_selection.h"

#include <algorithm>
#include <map>
#include <set>

#include "services/orchestrator/search_rules.h"

namespace accelopt::orchestrator {
namespace {

bool IsCorrect(const v1::Candidate& c) { return c.result().verdict() == v1::VERDICT_OK && c.result().has_latency(); }

// Faster first; equal latencies go to the earlier candidate.
bool Better(const v1::Candidate* a, const v1::Candidate* b) {
  const double la = Latency(*a), lb = Latency(*b);
  if (la != lb) return la < lb;
  return a->ordinal() < b->ordinal();
}

// The at most `beam_width` fastest distinct correct kernels of `candidates`.
std::vector<std::string> RankDistinct(const std::vector<const v1::Candidate*>& candidates, int beam_width) {
  std::vector<const v1::Candidate*> ok;
  for (const v1::Candidate* c : candidates) {
    if (IsCorrect(*c)) ok.push_back(c);
  }
  std::stable_sort(ok.begin(), ok.end(), Better);
  std::vector<std::string> beam;
  std::set<std::string> hashes;
  for (const v1::Candidate* c : ok) {
    if (static_cast<int>(beam.size()) >= beam_width) break;
    if (!hashes.insert(c->kernel().sha256()).second) continue;
    beam.push_back(c->candidate_id());
  }
  return beam;
}

}  // namespace

std::vector<std::string> SelectBeam(v1::BeamPolicy policy, const BeamPool& pool, int beam_width) {
  switch (policy) {
    case v1::BEAM_POLICY_DISTINCT:
      return SelectDistinctBeam(pool, beam_width);
    case v1::BEAM_POLICY_UNSPECIFIED:
    case v1::BEAM_POLICY_REFERENCE:
    default:
      return SelectReferenceBeam(pool, beam_width);
  }
}

std::vector<std::string> SelectDistinctBeam(const BeamPool& pool, int beam_width) {
  std::vector<const v1::Candidate*> all = pool.parents;
  all.insert(all.end(), pool.children.begin(), pool.children.end());
  return RankDistinct(all, beam_width);
}

std::vector<std::string> SelectReferenceBeam(const BeamPool& pool, int beam_width) {
  // Best-of-K: one winner per (parent, plan) branch. The ordinal without its sample bits names the branch
  // (iteration, parent rank, plan; search_ids.h), so the branches of a parent copy stay apart.
  std::map<int64_t, const v1::Candidate*> winners;
  for (const v1::Candidate* c : pool.children) {
    if (!IsCorrect(*c)) continue;
    auto [it, inserted] = winners.emplace(c->ordinal() >> 4, c);
    if (!inserted && Better(c, it->second)) it->second = c;
  }
  std::vector<const v1::Candidate*> contenders = pool.parents;
  for (const auto& [branch, c] : winners) contenders.push_back(c);
  std::vector<std::string> beam = RankDistinct(contenders, beam_width);
  // Padding: copies of the correct parents, in their rank order, until the beam is full.
  std::vector<std::string> fillers;
  std::set<std::string> seen;
  for (const v1::Candidate* parent : pool.parents) {
    if (IsCorrect(*parent) && seen.insert(parent->candidate_id()).second) fillers.push_back(parent->candidate_id());
  }
  for (size_t i = 0; !fillers.empty() && static_cast<int>(beam.size()) < beam_width; ++i) {
    beam.push_back(fillers[i % fillers.size()]);
  }
  return beam;
}

bool IsNewBest(const v1::Candidate* best, const v1::Candidate& candidate) {
  if (!IsCorrect(candidate)) return false;
  if (best == nullptr) return true;
  const double latency = Latency(candidate), best_latency = Latency(*best);
  return latency < best_latency || (latency == best_latency && candidate.ordinal() < best->ordinal());
}

}  // namespace accelopt::orchestrator

#include "services/orchestrator/beam_selection.h"

#include <algorithm>
#include <set>

namespace accelopt::orchestrator {

std::vector<std::string> SelectBeam(const std::vector<const v1::Candidate*>& pool, int beam_width) {
  std::vector<const v1::Candidate*> ok;
  for (const v1::Candidate* c : pool) {
    if (c->result().verdict() == v1::VERDICT_OK && c->result().has_latency()) ok.push_back(c);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const v1::Candidate* a, const v1::Candidate* b) {
    double la = a->result().latency().mean_ms(), lb = b->result().latency().mean_ms();
    if (la != lb) return la < lb;
    return a->ordinal() < b->ordinal();
  });
  std::vector<std::string> beam;
  std::set<std::string> hashes;
  for (const v1::Candidate* c : ok) {
    if (static_cast<int>(beam.size()) >= beam_width) break;
    if (!hashes.insert(c->kernel().sha256()).second) continue;
    beam.push_back(c->candidate_id());
  }
  return beam;
}

bool IsNewBest(const v1::Candidate* best, const v1::Candidate& candidate) {
  if (candidate.result().verdict() != v1::VERDICT_OK || !candidate.result().has_latency()) return false;
  if (best == nullptr) return true;
  const double latency = candidate.result().latency().mean_ms(), best_latency = best->result().latency().mean_ms();
  return latency < best_latency || (latency == best_latency && candidate.ordinal() < best->ordinal());
}

}  // namespace accelopt::orchestrator

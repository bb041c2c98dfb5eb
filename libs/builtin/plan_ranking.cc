#include "libs/builtin/plan_ranking.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace accelopt::builtin {
namespace {

// What each transformation usually buys before looking at the profile.
double Prior(const std::string& transformation) {
  static const std::map<std::string, double> kPriors = {{"widen_dma", 1.0},
                                                        {"batch_psum_evictions", 0.8},
                                                        {"vectorize_loop", 0.7},
                                                        {"move_elementwise_engine", 0.6},
                                                        {"hoist_invariant_load", 0.5},
                                                        {"hoist_invariant_store", 0.5},
                                                        {"fuse_loops", 0.4},
                                                        {"interchange_loops", 0.2},
                                                        {"split_loop", 0.1}};
  auto it = kPriors.find(transformation);
  return it == kPriors.end() ? 0.1 : it->second;
}

// trn1 (NeuronCore-v2): VectorE and GpSimd cannot access SBUF at the same time (the timing model's
// dve_pool_shared_sbuf_port), so element-wise work moved from one to the other relieves neither. Other devices
// (trn2, or real hardware of unknown generation) are not assumed to share the port.
bool SharesVectorGpsimdPort(const v1::ProfileResult& profile) { return profile.device() == v1::DEVICE_SIM_TRN1; }

// How busy the engine is; on a shared port VectorE and GpSimd count together.
double EngineActivity(const v1::EngineActive& e, const std::string& engine, bool shared_port) {
  if (engine == "vector") return shared_port ? e.dve() + e.pool() : e.dve();
  if (engine == "scalar") return e.act();
  if (engine == "gpsimd") return shared_port ? e.dve() + e.pool() : e.pool();
  return 0;
}

// How much the profile's bottleneck favours the transformation.
double BottleneckFit(const RewriteCandidate& c, const v1::ProfileResult& profile) {
  const v1::EngineActive& e = profile.engine_active();
  const double compute = std::max({e.pe(), e.act(), e.dve(), e.pool()});
  const std::string& t = c.transformation;
  if (t == "widen_dma" || t == "hoist_invariant_load" || t == "hoist_invariant_store") return e.dma();
  if (t == "batch_psum_evictions") return 0.5 * e.dma() + 0.5 * std::max(e.act(), e.dve());
  if (t == "move_elementwise_engine") {
    // Helps when a vector-side engine is the bottleneck and the destination engine has room.
    const bool shared = SharesVectorGpsimdPort(profile);
    return std::max(EngineActivity(e, "vector", shared), e.act()) - EngineActivity(e, c.target_engine, shared);
  }
  if (t == "vectorize_loop") {
    // Fewer, larger instructions: pays where an engine spends its time on per-instruction overhead (a busy
    // compute engine), and merges the loop's DMAs.
    return std::max({e.act(), e.dve(), e.pool()}) + 0.5 * e.dma();
  }
  if (t == "fuse_loops") return 0.5 * (1.0 - compute);
  return 0;
}

// Evidence from past experiences about this transformation: + for speedups, - for regressions.
double MemoryEvidence(const std::string& transformation, const std::vector<v1::Experience>& experiences) {
  double evidence = 0;
  for (const auto& x : experiences) {
    if (x.transformation() != transformation || x.speedup() <= 0) continue;
    const double gain = std::log(std::max(x.speedup(), 1.0));
    evidence += x.regression() ? -gain : gain;
  }
  // A 10% speedup seen once is worth about as much as a strong profile match.
  return 10.0 * evidence;
}

}  // namespace

std::vector<RankedCandidate> RankCandidates(const std::vector<RewriteCandidate>& candidates,
                                            const v1::ProfileResult& profile,
                                            const std::vector<v1::Experience>& experiences, uint64_t seed) {
  std::vector<RankedCandidate> ranked;
  const bool shared_port = SharesVectorGpsimdPort(profile);
  for (const auto& c : candidates) {
    // Not an offload on trn1: GpSimd takes its SBUF accesses from VectorE's port (and the reverse).
    if (shared_port && c.transformation == "move_elementwise_engine" &&
        ((c.target_engine == "gpsimd" && c.source_engine == "vector") ||
         (c.target_engine == "vector" && c.source_engine == "gpsimd"))) {
      continue;
    }
    RankedCandidate r{c, 0, MemoryEvidence(c.transformation, experiences)};
    r.score = Prior(c.transformation) + BottleneckFit(c, profile) + r.memory_evidence;
    ranked.push_back(std::move(r));
  }
  // Gumbel-top-k: a seeded perturbation of the scores gives a sample without replacement in which close
  // candidates swap places across seeds.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(1e-12, 1.0);
  std::vector<std::pair<double, size_t>> keys;
  for (size_t i = 0; i < ranked.size(); ++i) {
    keys.emplace_back(ranked[i].score - 0.15 * std::log(-std::log(uniform(rng))), i);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<RankedCandidate> ordered;
  for (const auto& [key, i] : keys) ordered.push_back(ranked[i]);
  return ordered;
}

}  // namespace accelopt::builtin

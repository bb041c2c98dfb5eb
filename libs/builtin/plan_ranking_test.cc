#include "libs/builtin/plan_ranking.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace accelopt::builtin {
namespace {

std::vector<RewriteCandidate> Candidates() {
  return {{"split_loop", "L14", "builtin: split_loop site=L14 factor=2", "split", "", ""},
          {"move_elementwise_engine", "S18", "builtin: move_elementwise_engine site=S18 call=0 engine=gpsimd", "move",
           "gpsimd", "vector"},
          {"widen_dma", "S16", "builtin: widen_dma site=S16", "widen", "", ""}};
}

v1::ProfileResult Profile(double dma, double dve, double pool) {
  v1::ProfileResult p;
  p.mutable_engine_active()->set_dma(dma);
  p.mutable_engine_active()->set_dve(dve);
  p.mutable_engine_active()->set_pool(pool);
  return p;
}

v1::Experience Seen(const std::string& transformation, double speedup, bool regression) {
  v1::Experience x;
  x.set_transformation(transformation);
  x.set_speedup(speedup);
  x.set_regression(regression);
  return x;
}

TEST(PlanRankingTest, TheProfilesBottleneckDecides) {
  auto dma_bound = RankCandidates(Candidates(), Profile(0.95, 0.2, 0.0), {}, 1);
  EXPECT_EQ(dma_bound.front().candidate.transformation, "widen_dma");
  auto vector_bound = RankCandidates(Candidates(), Profile(0.1, 0.98, 0.0), {}, 1);
  EXPECT_EQ(vector_bound.front().candidate.transformation, "move_elementwise_engine");
  EXPECT_EQ(vector_bound.back().candidate.transformation, "split_loop");
}

TEST(PlanRankingTest, GpsimdIsNoOffloadForVectorWorkOnTrn1) {
  // trn1: VectorE and GpSimd share the SBUF port, so moving VectorE work to GpSimd is not proposed; ScalarE (its
  // own port) is, and the VectorE side counts GpSimd's activity too. Work the compiler may put on ScalarE can
  // still move to GpSimd.
  std::vector<RewriteCandidate> candidates = Candidates();
  candidates.push_back({"move_elementwise_engine", "S20",
                        "builtin: move_elementwise_engine site=S20 call=0 engine=scalar", "move", "scalar", "auto"});
  candidates.push_back({"move_elementwise_engine", "S21",
                        "builtin: move_elementwise_engine site=S21 call=0 engine=gpsimd", "move", "gpsimd", "auto"});
  v1::ProfileResult trn1 = Profile(0.0, 0.6, 0.3);
  trn1.set_device(v1::DEVICE_SIM_TRN1);
  auto ranked = RankCandidates(candidates, trn1, {}, 1);
  ASSERT_EQ(ranked.size(), 4u);
  for (const auto& r : ranked) EXPECT_NE(r.candidate.site, "S18") << r.candidate.plan_line;
  EXPECT_EQ(ranked.front().candidate.target_engine, "scalar");
  EXPECT_NEAR(ranked.front().score, 0.6 + (0.6 + 0.3), 1e-9);
  for (const auto& r : ranked) {
    if (r.candidate.site == "S21") {
      EXPECT_NEAR(r.score, 0.6 + (0.6 + 0.3) - (0.6 + 0.3), 1e-9);
    }
  }
  // trn2 lifts the restriction: the move of VectorE work to GpSimd is ranked, with room on GpSimd.
  v1::ProfileResult trn2 = trn1;
  trn2.set_device(v1::DEVICE_SIM_TRN2);
  auto lifted = RankCandidates(candidates, trn2, {}, 1);
  ASSERT_EQ(lifted.size(), 5u);
  EXPECT_TRUE(
      std::any_of(lifted.begin(), lifted.end(), [](const RankedCandidate& r) { return r.candidate.site == "S18"; }));
}

TEST(PlanRankingTest, VectorizingALoopLeadsWhenAComputeEngineIsBusy) {
  // What the rewrite engine offers on rope's baseline (the GpSimd moves left out on trn1).
  const std::vector<RewriteCandidate> candidates = {
      {"hoist_invariant_load", "S21", "builtin: hoist_invariant_load site=S21", "hoist", "", ""},
      {"hoist_invariant_load", "S22", "builtin: hoist_invariant_load site=S22", "hoist", "", ""},
      {"interchange_loops", "L18", "builtin: interchange_loops site=L18", "interchange", "", ""},
      {"split_loop", "L19", "builtin: split_loop site=L19 factor=2", "split", "", ""},
      {"move_elementwise_engine", "S24", "builtin: move_elementwise_engine site=S24 call=0 engine=gpsimd", "move",
       "gpsimd", "vector"},
      {"vectorize_loop", "L19", "builtin: vectorize_loop site=L19", "vectorize", "", ""}};
  // rope at the small shape on trn1: VectorE 42% busy with [128, 64] instructions, DMA 22%.
  v1::ProfileResult rope = Profile(0.22, 0.42, 0.0);
  rope.set_device(v1::DEVICE_SIM_TRN1);
  for (uint64_t seed = 0; seed < 16; ++seed) {
    auto ranked = RankCandidates(candidates, rope, {}, seed);
    ASSERT_EQ(ranked.size(), 5u);
    // The highest score; after exploration among the three plans the `small` preset draws per kernel.
    auto best = std::max_element(ranked.begin(), ranked.end(),
                                 [](const RankedCandidate& a, const RankedCandidate& b) { return a.score < b.score; });
    EXPECT_EQ(best->candidate.transformation, "vectorize_loop");
    EXPECT_LT(best - ranked.begin(), 3) << "seed " << seed;
  }
}

TEST(PlanRankingTest, MemoryChangesTheChoice) {
  const v1::ProfileResult profile = Profile(0.95, 0.2, 0.0);
  auto without = RankCandidates(Candidates(), profile, {}, 7);
  ASSERT_EQ(without.front().candidate.transformation, "widen_dma");
  // The memory saw widen_dma regress and the engine move pay off.
  auto with = RankCandidates(Candidates(), profile,
                             {Seen("widen_dma", 1.3, true), Seen("move_elementwise_engine", 1.25, false)}, 7);
  EXPECT_EQ(with.front().candidate.transformation, "move_elementwise_engine");
  EXPECT_LT(with.back().memory_evidence, 0);
}

TEST(PlanRankingTest, SameSeedSameOrderAndEveryCandidateOnce) {
  auto a = RankCandidates(Candidates(), Profile(0.5, 0.5, 0.0), {}, 42);
  auto b = RankCandidates(Candidates(), Profile(0.5, 0.5, 0.0), {}, 42);
  ASSERT_EQ(a.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].candidate.plan_line, b[i].candidate.plan_line);
  std::set<std::string> lines;
  for (const auto& r : a) lines.insert(r.candidate.plan_line);
  EXPECT_EQ(lines.size(), 3u);
}

TEST(PlanRankingTest, ExplorationReordersOnlyCloseCandidates) {
  // Two nearly tied candidates swap under some seed; the clear loser never rises to the top.
  std::vector<RewriteCandidate> close = {
      {"hoist_invariant_load", "S1", "builtin: hoist_invariant_load site=S1", "", "", ""},
      {"hoist_invariant_store", "S2", "builtin: hoist_invariant_store site=S2", "", "", ""},
      {"split_loop", "L3", "builtin: split_loop site=L3", "", "", ""}};
  std::set<std::string> firsts;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    auto r = RankCandidates(close, Profile(0.9, 0.1, 0.0), {}, seed);
    firsts.insert(r.front().candidate.transformation);
  }
  EXPECT_EQ(firsts, (std::set<std::string>{"hoist_invariant_load", "hoist_invariant_store"}));
}

}  // namespace
}  // namespace accelopt::builtin

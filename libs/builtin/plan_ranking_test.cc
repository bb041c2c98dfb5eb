#include "libs/builtin/plan_ranking.h"

#include <gtest/gtest.h>

namespace accelopt::builtin {
namespace {

std::vector<RewriteCandidate> Candidates() {
  return {{"split_loop", "L14", "builtin: split_loop site=L14 factor=2", "split", ""},
          {"move_elementwise_engine", "S18", "builtin: move_elementwise_engine site=S18 call=0 engine=gpsimd", "move",
           "gpsimd"},
          {"widen_dma", "S16", "builtin: widen_dma site=S16", "widen", ""}};
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
      {"hoist_invariant_load", "S1", "builtin: hoist_invariant_load site=S1", "", ""},
      {"hoist_invariant_store", "S2", "builtin: hoist_invariant_store site=S2", "", ""},
      {"split_loop", "L3", "builtin: split_loop site=L3", "", ""}};
  std::set<std::string> firsts;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    auto r = RankCandidates(close, Profile(0.9, 0.1, 0.0), {}, seed);
    firsts.insert(r.front().candidate.transformation);
  }
  EXPECT_EQ(firsts, (std::set<std::string>{"hoist_invariant_load", "hoist_invariant_store"}));
}

}  // namespace
}  // namespace accelopt::builtin

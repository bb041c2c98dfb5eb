#include "services/orchestrator/beam_selection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/orchestrator/search_ids.h"

namespace accelopt::orchestrator {
namespace {

using ::testing::ElementsAre;

v1::Candidate Make(const std::string& id, int64_t ordinal, v1::Verdict verdict, double latency,
                   const std::string& sha) {
  v1::Candidate c;
  c.set_candidate_id(id);
  c.set_ordinal(ordinal);
  c.mutable_result()->set_verdict(verdict);
  if (verdict == v1::VERDICT_OK) c.mutable_result()->mutable_latency()->set_mean_ms(latency);
  c.mutable_kernel()->set_sha256(sha);
  return c;
}

std::vector<const v1::Candidate*> Pool(const std::vector<v1::Candidate>& cs) {
  std::vector<const v1::Candidate*> pool;
  for (const auto& c : cs) pool.push_back(&c);
  return pool;
}

TEST(BeamSelectionTest, ParentsCompeteWithTheirChildren) {
  // Children slower than their parent do not replace it (the reference code's bug).
  std::vector<v1::Candidate> cs = {Make("parent", 0, v1::VERDICT_OK, 1.0, "p"),
                                   Make("slow1", 1, v1::VERDICT_OK, 1.2, "a"),
                                   Make("slow2", 2, v1::VERDICT_OK, 1.1, "b")};
  EXPECT_THAT(SelectDistinctBeam(BeamPool{Pool(cs), {}}, 2), ElementsAre("parent", "slow2"));
}

TEST(BeamSelectionTest, OnlyCorrectKernelsRankedByLatency) {
  std::vector<v1::Candidate> cs = {Make("bad", 1, v1::VERDICT_INCORRECT, 0, "x"),
                                   Make("nokernel", 2, v1::VERDICT_NO_KERNEL, 0, ""),
                                   Make("b", 3, v1::VERDICT_OK, 0.7, "b"), Make("a", 4, v1::VERDICT_OK, 0.5, "a"),
                                   Make("c", 5, v1::VERDICT_OK, 0.9, "c")};
  EXPECT_THAT(SelectDistinctBeam(BeamPool{Pool(cs), {}}, 6), ElementsAre("a", "b", "c"));
  EXPECT_THAT(SelectDistinctBeam(BeamPool{Pool(cs), {}}, 1), ElementsAre("a"));
}

TEST(BeamSelectionTest, SameHashCountsOnceAndTiesGoToTheEarlierCandidate) {
  std::vector<v1::Candidate> cs = {
      Make("late", 9, v1::VERDICT_OK, 0.5, "h1"), Make("early", 3, v1::VERDICT_OK, 0.5, "h2"),
      Make("copy", 4, v1::VERDICT_OK, 0.5, "h2"), Make("other", 5, v1::VERDICT_OK, 0.6, "h3")};
  EXPECT_THAT(SelectDistinctBeam(BeamPool{Pool(cs), {}}, 3), ElementsAre("early", "late", "other"));
}

// A child of iteration 1, beam rank `rank`, plan `plan`, sample `sample`.
v1::Candidate Child(const std::string& id, int rank, int plan, int sample, v1::Verdict verdict, double latency) {
  v1::Candidate c = Make(id, CandidateOrdinal(1, rank, plan, sample), verdict, latency, id);
  c.set_parent_id("parent");
  return c;
}

TEST(BeamSelectionTest, ReferenceKeepsOnlyTheBestSampleOfEachBranch) {
  std::vector<v1::Candidate> parents = {Make("parent", 0, v1::VERDICT_OK, 1.0, "p")};
  // Both samples of plan 0 beat everything else; only the better one may enter the beam.
  std::vector<v1::Candidate> children = {
      Child("p0s0", 0, 0, 0, v1::VERDICT_OK, 0.5), Child("p0s1", 0, 0, 1, v1::VERDICT_OK, 0.4),
      Child("p1s0", 0, 1, 0, v1::VERDICT_OK, 0.8), Child("p1s1", 0, 1, 1, v1::VERDICT_INCORRECT, 0)};
  BeamPool pool{Pool(parents), Pool(children)};
  EXPECT_THAT(SelectReferenceBeam(pool, 3), ElementsAre("p0s1", "p1s0", "parent"));
  EXPECT_THAT(SelectDistinctBeam(pool, 3), ElementsAre("p0s1", "p0s0", "p1s0"));
  EXPECT_THAT(SelectBeam(v1::BEAM_POLICY_UNSPECIFIED, pool, 3), ElementsAre("p0s1", "p1s0", "parent"));
}

TEST(BeamSelectionTest, ReferencePadsTheBeamWithParentCopiesWhenBranchesFail) {
  // Two parents (one a copy of the other's rank 0 entry is allowed); one plan in N yields a correct kernel.
  std::vector<v1::Candidate> parents = {Make("a", 0, v1::VERDICT_OK, 1.0, "a"), Make("b", 1, v1::VERDICT_OK, 2.0, "b")};
  std::vector<v1::Candidate> children = {Child("win", 0, 2, 0, v1::VERDICT_OK, 0.5),
                                         Child("bad", 0, 0, 0, v1::VERDICT_INCORRECT, 0),
                                         Child("none", 1, 0, 0, v1::VERDICT_NO_KERNEL, 0)};
  BeamPool pool{Pool(parents), Pool(children)};
  EXPECT_THAT(SelectReferenceBeam(pool, 6), ElementsAre("win", "a", "b", "a", "b", "a"));
  EXPECT_THAT(SelectDistinctBeam(pool, 6), ElementsAre("win", "a", "b"));
  // A beam of copies pads from its distinct members only.
  std::vector<const v1::Candidate*> copies = {&parents[0], &parents[0]};
  EXPECT_THAT(SelectReferenceBeam(BeamPool{copies, {}}, 3), ElementsAre("a", "a", "a"));
  // Nothing correct: nothing to pad with.
  std::vector<v1::Candidate> wrong = {Make("w", 0, v1::VERDICT_INCORRECT, 0, "w")};
  EXPECT_TRUE(SelectReferenceBeam(BeamPool{Pool(wrong), {}}, 3).empty());
}

TEST(BeamSelectionTest, NewBestIsCumulativeAndIndependentOfArrivalOrder) {
  v1::Candidate first = Make("c1", 5, v1::VERDICT_OK, 1.0, "1");
  EXPECT_TRUE(IsNewBest(nullptr, first));
  EXPECT_FALSE(IsNewBest(&first, Make("same-later", 6, v1::VERDICT_OK, 1.0, "2")));
  EXPECT_TRUE(IsNewBest(&first, Make("same-earlier", 4, v1::VERDICT_OK, 1.0, "2")));
  EXPECT_FALSE(IsNewBest(&first, Make("slower", 2, v1::VERDICT_OK, 1.5, "2")));
  EXPECT_FALSE(IsNewBest(&first, Make("wrong", 2, v1::VERDICT_INCORRECT, 0, "2")));
  EXPECT_TRUE(IsNewBest(&first, Make("faster", 9, v1::VERDICT_OK, 0.9, "2")));
}

TEST(SearchIdsTest, CandidateIdsAndSeedsAreDeterministic) {
  EXPECT_EQ(CandidateId("job-1", 3, "i002-abc", 4, 1), CandidateId("job-1", 3, "i002-abc", 4, 1));
  EXPECT_NE(CandidateId("job-1", 3, "i002-abc", 4, 1), CandidateId("job-1", 3, "i002-abc", 4, 0));
  EXPECT_NE(CandidateId("job-1", 3, "i002-abc", 4, 1), CandidateId("job-2", 3, "i002-abc", 4, 1));
  const std::string id = CandidateId("job-1", 3, "p", 0, 0);
  EXPECT_EQ(id.size(), 17u);
  EXPECT_EQ(id.substr(0, 5), "i003-");
  EXPECT_EQ(DeriveSeed(42, "plan", 1, "p", 0), DeriveSeed(42, "plan", 1, "p", 0));
  EXPECT_NE(DeriveSeed(42, "plan", 1, "p", 0), DeriveSeed(43, "plan", 1, "p", 0));
  EXPECT_NE(DeriveSeed(42, "plan", 1, "p", 0), DeriveSeed(42, "implement", 1, "p", 0));
  EXPECT_LT(CandidateOrdinal(1, 63, 63, 15), CandidateOrdinal(2, 0, 0, 0));
  EXPECT_LT(CandidateOrdinal(1, 0, 1, 0), CandidateOrdinal(1, 1, 0, 0));
  EXPECT_LT(0, CandidateOrdinal(1, 0, 0, 0));
}

}  // namespace
}  // namespace accelopt::orchestrator

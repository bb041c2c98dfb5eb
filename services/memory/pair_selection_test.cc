#include "services/memory/pair_selection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::Sample;
using ::testing::ElementsAre;
using ::testing::Pair;

// (candidate id, measured speedup) of each selected pair, in order.
std::vector<std::pair<std::string, double>> Selected(const Samples& samples, SelectionParams params = {}) {
  std::vector<std::pair<std::string, double>> out;
  for (const SelectedPair& p : SelectPairs(samples, params)) {
    out.emplace_back(p.sample->candidate_id(), p.measured_speedup);
  }
  return out;
}

Samples Of(std::vector<v1::SampleResult> list) {
  Samples samples;
  for (auto& s : list) *samples.Add() = std::move(s);
  return samples;
}

TEST(PairSelectionTest, PerPlanMaxWhenAnyGainMinWhenAllLoseNoneAtExactlyOne) {
  Samples samples = Of({
      Sample("c0", 0, 0, 1.2), Sample("c0", 0, 1, 1.5),  // max 1.5 > 1: the best sample
      Sample("c0", 1, 0, 0.8), Sample("c0", 1, 1, 0.5),  // max 0.8 < 1: the WORST sample
      Sample("c0", 2, 0, 1.0), Sample("c0", 2, 1, 0.5),  // max exactly 1.0: nothing
      Sample("c1", 0, 0, 0.6), Sample("c1", 0, 1, 1.1),  // max 1.1 > 1: 1.1, never the 0.6
  });
  EXPECT_THAT(Selected(samples), ElementsAre(Pair("c0-p0-s1", 1.5), Pair("c1-p0-s1", 1.1), Pair("c0-p1-s1", 0.5)));
}

TEST(PairSelectionTest, GroupsByParentAndPlan) {
  // Plan 0 of two different parents are two groups, each contributing its own best.
  Samples samples = Of({Sample("a", 0, 0, 1.3), Sample("b", 0, 0, 1.2)});
  EXPECT_THAT(Selected(samples), ElementsAre(Pair("a-p0-s0", 1.3), Pair("b-p0-s0", 1.2)));
}

TEST(PairSelectionTest, SkipsFailedSamplesAndSamplesWithoutLatencies) {
  v1::SampleResult no_parent_latency = Sample("c0", 1, 0, 2.0);
  no_parent_latency.set_parent_latency_ms(0);
  v1::SampleResult no_latency = Sample("c0", 2, 0, 2.0);
  no_latency.mutable_result()->clear_latency();
  Samples samples =
      Of({Sample("c0", 0, 0, 3.0, v1::VERDICT_INCORRECT), Sample("c0", 0, 1, 1.2), std::move(no_parent_latency),
          std::move(no_latency), Sample("c0", 3, 0, 0.1, v1::VERDICT_TIMEOUT)});
  EXPECT_THAT(Selected(samples), ElementsAre(Pair("c0-p0-s1", 1.2)));
}

TEST(PairSelectionTest, TiesGoToTheFirstSampleIndex) {
  // The request lists sample 1 before sample 0; the tie still goes to sample index 0.
  Samples samples =
      Of({Sample("c0", 0, 1, 1.3), Sample("c0", 0, 0, 1.3), Sample("c0", 1, 0, 0.5), Sample("c0", 1, 1, 0.5)});
  EXPECT_THAT(Selected(samples), ElementsAre(Pair("c0-p0-s0", 1.3), Pair("c0-p1-s0", 0.5)));
}

TEST(PairSelectionTest, EqualSpeedupsAcrossPlansKeepPoolOrder) {
  Samples samples =
      Of({Sample("c1", 0, 0, 1.2), Sample("c0", 0, 0, 1.2), Sample("c0", 1, 0, 0.5), Sample("c1", 1, 0, 0.5)});
  EXPECT_THAT(Selected(samples),
              ElementsAre(Pair("c1-p0-s0", 1.2), Pair("c0-p0-s0", 1.2), Pair("c0-p1-s0", 0.5), Pair("c1-p1-s0", 0.5)));
}

TEST(PairSelectionTest, ThresholdsAreStrict) {
  const double at_negative_threshold = 1.0 / 1.15;
  Samples samples =
      Of({Sample("c0", 0, 0, 1.04), Sample("c0", 1, 0, 1.0401), Sample("c0", 2, 0, 1.02),
          Sample("c0", 3, 0, at_negative_threshold), Sample("c0", 4, 0, 0.8695), Sample("c0", 5, 0, 0.95)});
  EXPECT_THAT(Selected(samples), ElementsAre(Pair("c0-p1-s0", 1.0401), Pair("c0-p4-s0", 0.8695)));
}

TEST(PairSelectionTest, CustomThresholds) {
  Samples samples =
      Of({Sample("c0", 0, 0, 1.2), Sample("c0", 1, 0, 1.5), Sample("c0", 2, 0, 0.6), Sample("c0", 3, 0, 0.4)});
  SelectionParams params;
  params.positive_threshold = 1.3;
  params.negative_threshold = 2.0;  // keeps s < 0.5
  EXPECT_THAT(Selected(samples, params), ElementsAre(Pair("c0-p1-s0", 1.5), Pair("c0-p3-s0", 0.4)));
}

TEST(PairSelectionTest, PositivesCappedAtHalfOfTopKAndNegativesFillTheRest) {
  Samples samples =
      Of({Sample("c0", 0, 0, 1.10), Sample("c0", 1, 0, 1.60), Sample("c0", 2, 0, 1.20), Sample("c0", 3, 0, 1.50),
          Sample("c0", 4, 0, 1.30), Sample("c0", 5, 0, 1.40), Sample("c1", 0, 0, 0.50), Sample("c1", 1, 0, 0.20),
          Sample("c1", 2, 0, 0.80), Sample("c1", 3, 0, 0.30), Sample("c1", 4, 0, 0.40)});
  // TopK 8: the 4 best positives, then the 4 worst negatives.
  EXPECT_THAT(Selected(samples),
              ElementsAre(Pair("c0-p1-s0", 1.6), Pair("c0-p3-s0", 1.5), Pair("c0-p5-s0", 1.4), Pair("c0-p4-s0", 1.3),
                          Pair("c1-p1-s0", 0.2), Pair("c1-p3-s0", 0.3), Pair("c1-p4-s0", 0.4), Pair("c1-p0-s0", 0.5)));
}

TEST(PairSelectionTest, NegativesFillSlotsPositivesLeaveEmpty) {
  Samples samples =
      Of({Sample("c0", 0, 0, 1.5), Sample("c0", 1, 0, 1.01),  // 1.01 is under the threshold
          Sample("c1", 0, 0, 0.1), Sample("c1", 1, 0, 0.2), Sample("c1", 2, 0, 0.3), Sample("c1", 3, 0, 0.4),
          Sample("c1", 4, 0, 0.5), Sample("c1", 5, 0, 0.6), Sample("c1", 6, 0, 0.7), Sample("c1", 7, 0, 0.8)});
  // One positive, so 7 negative slots; 0.8 is not below 1/1.15 anyway.
  EXPECT_THAT(Selected(samples),
              ElementsAre(Pair("c0-p0-s0", 1.5), Pair("c1-p0-s0", 0.1), Pair("c1-p1-s0", 0.2), Pair("c1-p2-s0", 0.3),
                          Pair("c1-p3-s0", 0.4), Pair("c1-p4-s0", 0.5), Pair("c1-p5-s0", 0.6), Pair("c1-p6-s0", 0.7)));
}

TEST(PairSelectionTest, OddTopKRoundsThePositiveShareDown) {
  Samples samples =
      Of({Sample("c0", 0, 0, 1.5), Sample("c0", 1, 0, 1.4), Sample("c0", 2, 0, 1.3), Sample("c0", 3, 0, 0.5)});
  SelectionParams params;
  params.top_k = 3;  // at most 1 positive
  EXPECT_THAT(Selected(samples, params), ElementsAre(Pair("c0-p0-s0", 1.5), Pair("c0-p3-s0", 0.5)));
  params.top_k = 1;  // no positive at all
  EXPECT_THAT(Selected(samples, params), ElementsAre(Pair("c0-p3-s0", 0.5)));
}

TEST(PairSelectionTest, OrientsRegressionsFromTheNewKernelBackToTheParent) {
  Samples samples = Of({Sample("c0", 0, 0, 2.0), Sample("c0", 1, 0, 0.5)});
  std::vector<SelectedPair> pairs = SelectPairs(samples, {});
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_FALSE(pairs[0].regression);
  EXPECT_EQ(pairs[0].slow, &samples[0].parent_kernel());
  EXPECT_EQ(pairs[0].fast, &samples[0].kernel());
  EXPECT_DOUBLE_EQ(pairs[0].speedup(), 2.0);
  EXPECT_TRUE(pairs[1].regression);
  EXPECT_EQ(pairs[1].slow, &samples[1].kernel());
  EXPECT_EQ(pairs[1].fast, &samples[1].parent_kernel());
  EXPECT_DOUBLE_EQ(pairs[1].speedup(), 2.0);
  EXPECT_EQ(pairs[1].sample_index, 1);
}

TEST(PairSelectionTest, ZerosInTheRequestMeanThePaperDefaults) {
  v1::SummarizeIterationRequest request;
  SelectionParams params = SelectionParamsFrom(request);
  EXPECT_EQ(params.top_k, 8);
  EXPECT_DOUBLE_EQ(params.positive_threshold, 1.04);
  EXPECT_DOUBLE_EQ(params.negative_threshold, 1.15);
  request.set_max_experiences(4);
  request.set_positive_threshold(1.1);
  request.set_negative_threshold(1.5);
  params = SelectionParamsFrom(request);
  EXPECT_EQ(params.top_k, 4);
  EXPECT_DOUBLE_EQ(params.positive_threshold, 1.1);
  EXPECT_DOUBLE_EQ(params.negative_threshold, 1.5);
}

TEST(PairSelectionTest, NothingToSelect) { EXPECT_TRUE(SelectPairs(Samples(), {}).empty()); }

}  // namespace
}  // namespace accelopt::memory

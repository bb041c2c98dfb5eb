// Chooses which slow-fast kernel pairs of one iteration become experiences, exactly as the reference
// AccelOpt code does (docs/memory.md "Pair selection").
#pragma once

#include <vector>

#include "accelopt/v1/memory_service.pb.h"

namespace accelopt::memory {

// Paper defaults: TopK 8, a positive needs speedup > 1.04, a negative speedup < 1/1.15.
inline constexpr int kDefaultTopK = 8;
inline constexpr double kDefaultPositiveThreshold = 1.04;
inline constexpr double kDefaultNegativeThreshold = 1.15;

struct SelectionParams {
  // [TopK] at most this many pairs; at most TopK/2 (rounded down) of them positive.
  int top_k = kDefaultTopK;
  double positive_threshold = kDefaultPositiveThreshold;
  double negative_threshold = kDefaultNegativeThreshold;
};

// The request's parameters, with zeros replaced by the defaults above.
SelectionParams SelectionParamsFrom(const v1::SummarizeIterationRequest& request);

// One selected sample, oriented slow -> fast. Pointers refer into the samples given to SelectPairs.
struct SelectedPair {
  // Index of the sample in the input.
  int sample_index = 0;
  const v1::SampleResult* sample = nullptr;
  // Parent latency / new latency, as measured (may be below 1).
  double measured_speedup = 0;
  // True when the new kernel was slower than its parent: then slow = the new kernel, fast = the parent.
  bool regression = false;
  const v1::Kernel* slow = nullptr;
  const v1::Kernel* fast = nullptr;
  // Speedup of fast over slow: max(s, 1/s) >= 1.
  double speedup() const { return regression ? 1.0 / measured_speedup : measured_speedup; }
};

using Samples = google::protobuf::RepeatedPtrField<v1::SampleResult>;

// The reference rules (accelopt-algorithm.md §2.2):
//  1. Keep samples with verdict OK, a latency and a parent latency (both > 0); s = parent / latency.
//  2. Group by (parent_id, plan_index). Per group: if max s > 1 take the max sample, else if max s < 1 take
//     the MIN sample, exactly 1 takes nothing. Ties go to the lowest sample_index, then the earlier sample.
//  3. Pool the groups' choices (groups in order of first appearance). Positives (s > 1) sorted descending,
//     negatives ascending (worst first); both sorts are stable.
//  4. Positives: keep s > positive_threshold, at most floor(top_k / 2).
//  5. Negatives: keep s < 1 / negative_threshold, at most top_k - (positives selected).
// Returns the selected positives then the selected negatives, in that order.
std::vector<SelectedPair> SelectPairs(const Samples& samples, const SelectionParams& params);

}  // namespace accelopt::memory

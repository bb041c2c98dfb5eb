#include "services/memory/pair_selection.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace accelopt::memory {

SelectionParams SelectionParamsFrom(const v1::SummarizeIterationRequest& request) {
  SelectionParams params;
  if (request.max_experiences() > 0) params.top_k = request.max_experiences();
  if (request.positive_threshold() > 0) params.positive_threshold = request.positive_threshold();
  if (request.negative_threshold() > 0) params.negative_threshold = request.negative_threshold();
  return params;
}

namespace {

struct Choice {
  int sample_index;
  double speedup;
};

// True when `candidate` replaces `best` as the extreme of a group: strictly better, or equal with a lower
// sample_index (the reference takes the first index on ties).
bool Replaces(const Choice& candidate, const Choice& best, const Samples& samples, bool want_max) {
  if (candidate.speedup != best.speedup) {
    return want_max ? candidate.speedup > best.speedup : candidate.speedup < best.speedup;
  }
  return samples[candidate.sample_index].sample_index() < samples[best.sample_index].sample_index();
}

}  // namespace

std::vector<SelectedPair> SelectPairs(const Samples& samples, const SelectionParams& params) {
  // Groups in order of first appearance, each holding its usable samples in input order.
  std::map<std::pair<std::string, int>, size_t> group_of;
  std::vector<std::vector<Choice>> groups;
  for (int i = 0; i < samples.size(); ++i) {
    const v1::SampleResult& s = samples[i];
    if (s.result().verdict() != v1::VERDICT_OK) continue;
    double latency = s.result().latency().mean_ms();
    if (!(latency > 0) || !(s.parent_latency_ms() > 0)) continue;
    auto [it, inserted] = group_of.try_emplace({s.parent_id(), s.plan_index()}, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back({i, s.parent_latency_ms() / latency});
  }

  std::vector<Choice> positives, negatives;
  for (const auto& group : groups) {
    Choice max = group.front(), min = group.front();
    for (const Choice& c : group) {
      if (Replaces(c, max, samples, /*want_max=*/true)) max = c;
      if (Replaces(c, min, samples, /*want_max=*/false)) min = c;
    }
    if (max.speedup > 1.0) {
      positives.push_back(max);
    } else if (max.speedup < 1.0) {
      negatives.push_back(min);
    }
  }
  std::stable_sort(positives.begin(), positives.end(),
                   [](const Choice& a, const Choice& b) { return a.speedup > b.speedup; });
  std::stable_sort(negatives.begin(), negatives.end(),
                   [](const Choice& a, const Choice& b) { return a.speedup < b.speedup; });

  std::vector<SelectedPair> selected;
  auto add = [&](const Choice& c) {
    const v1::SampleResult& s = samples[c.sample_index];
    SelectedPair pair;
    pair.sample_index = c.sample_index;
    pair.sample = &s;
    pair.measured_speedup = c.speedup;
    pair.regression = c.speedup < 1.0;
    pair.slow = pair.regression ? &s.kernel() : &s.parent_kernel();
    pair.fast = pair.regression ? &s.parent_kernel() : &s.kernel();
    selected.push_back(pair);
  };
  const int max_positive = std::max(params.top_k, 0) / 2;
  for (const Choice& c : positives) {
    if (static_cast<int>(selected.size()) >= max_positive) break;
    if (c.speedup > params.positive_threshold) add(c);
  }
  const int max_total = std::max(params.top_k, 0);
  const double negative_limit = 1.0 / params.negative_threshold;
  for (const Choice& c : negatives) {
    if (static_cast<int>(selected.size()) >= max_total) break;
    if (c.speedup < negative_limit) add(c);
  }
  return selected;
}

}  // namespace accelopt::memory

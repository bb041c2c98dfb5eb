#include "services/memory/experience_query.h"

#include <algorithm>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "libs/core/splitmix64.h"
#include "libs/core/status_macros.h"

namespace accelopt::memory {
namespace {

absl::StatusOr<std::vector<v1::Experience>> Fifo(const ExperienceStore& store, const std::string& ns, int capacity) {
  std::vector<v1::Experience> out;
  ACCELOPT_RETURN_IF_ERROR(store.ForEachNewestFirst(ns, [&](const v1::Experience& e) {
    out.push_back(e);
    return static_cast<int>(out.size()) < capacity;
  }));
  return out;
}

absl::StatusOr<std::vector<v1::Experience>> Random(const ExperienceStore& store, const std::string& ns, int capacity,
                                                   uint64_t seed) {
  std::vector<v1::Experience> batch;
  ACCELOPT_RETURN_IF_ERROR(store.ForEachNewestFirst(ns, [&](const v1::Experience& e) {
    if (!batch.empty() && (e.provenance().job_id() != batch.front().provenance().job_id() ||
                           e.provenance().iteration() != batch.front().provenance().iteration())) {
      return false;
    }
    batch.push_back(e);
    return true;
  }));
  if (batch.empty()) return batch;
  const int64_t newest_sequence = batch.front().sequence();
  std::reverse(batch.begin(), batch.end());
  if (static_cast<int>(batch.size()) >= capacity) return batch;

  // The batch holds the newest sequences; everything before them is older.
  const int64_t older = std::max<int64_t>(0, store.CountIn(ns) - static_cast<int64_t>(batch.size()));
  const int64_t want = std::min<int64_t>(capacity - static_cast<int64_t>(batch.size()), older);
  std::mt19937_64 rng(core::SplitMix64(seed ^ core::SplitMix64(static_cast<uint64_t>(newest_sequence))));
  // Partial Fisher-Yates over positions [0, older); `moved` holds the positions swapped so far.
  absl::flat_hash_map<int64_t, int64_t> moved;
  auto at = [&](int64_t i) {
    auto it = moved.find(i);
    return it == moved.end() ? i : it->second;
  };
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < want; ++i) {
    int64_t j = i + static_cast<int64_t>(rng() % static_cast<uint64_t>(older - i));
    picked.push_back(at(j));
    moved[j] = at(i);
  }
  std::vector<v1::Experience> out = std::move(batch);
  for (int64_t sequence : store.SequencesAt(ns, picked)) {
    ACCELOPT_ASSIGN_OR_RETURN(v1::Experience e, store.Get(ns, sequence));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

absl::Status ValidateQuery(const QueryParams& params) {
  ACCELOPT_RETURN_IF_ERROR(ValidateNamespace(params.ns, "namespace"));
  if (params.capacity < 0) return absl::InvalidArgumentError("capacity: must not be negative");
  if (params.policy != v1::MEMORY_POLICY_UNSPECIFIED && params.policy != v1::MEMORY_POLICY_FIFO &&
      params.policy != v1::MEMORY_POLICY_RANDOM && params.policy != v1::MEMORY_POLICY_OFF) {
    return absl::InvalidArgumentError(absl::StrCat("policy: unknown value ", params.policy));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Experience>> QueryExperiences(const ExperienceStore& store, const QueryParams& params) {
  ACCELOPT_RETURN_IF_ERROR(ValidateQuery(params));
  if (params.policy == v1::MEMORY_POLICY_OFF) return std::vector<v1::Experience>();
  int capacity = params.capacity > 0 ? params.capacity : kDefaultCapacity;
  if (params.policy == v1::MEMORY_POLICY_RANDOM) return Random(store, params.ns, capacity, params.seed);
  return Fifo(store, params.ns, capacity);
}

}  // namespace accelopt::memory

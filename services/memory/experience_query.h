// Which stored experiences the planner sees: FIFO (paper) or seeded RANDOM (reference code) over one
// namespace (docs/memory.md "Policies").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/job.pb.h"
#include "services/memory/experience_store.h"

namespace accelopt::memory {

// [ExpN] of the paper.
inline constexpr int kDefaultCapacity = 16;

struct QueryParams {
  std::string ns;
  // 0 means kDefaultCapacity.
  int capacity = 0;
  // UNSPECIFIED means FIFO.
  v1::MemoryPolicy policy = v1::MEMORY_POLICY_UNSPECIFIED;
  uint64_t seed = 0;
};

// INVALID_ARGUMENT naming `namespace`, `capacity` or `policy`.
absl::Status ValidateQuery(const QueryParams& params);

// FIFO: the newest `capacity` experiences, newest first.
// RANDOM: the newest batch (the newest experience and the run of experiences just before it with the same
// provenance job and iteration) in insertion order, all of it even beyond `capacity`; then a uniform
// sample without replacement of min(capacity - |batch|, |older|) older experiences, in sample order. The
// sample is a partial Fisher-Yates shuffle of the older experiences (ascending sequence) driven by
// std::mt19937_64 seeded with SplitMix64(seed ^ SplitMix64(newest sequence)), index i + rng() % (n - i): the
// same seed and the same stored experiences give the same answer, and each new batch reshuffles.
// An empty or unknown namespace gives no experiences.
absl::StatusOr<std::vector<v1::Experience>> QueryExperiences(const ExperienceStore& store, const QueryParams& params);

}  // namespace accelopt::memory

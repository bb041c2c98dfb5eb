#include "services/orchestrator/search_ids.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/core/sha256.h"

namespace accelopt::orchestrator {

std::string CandidateId(absl::string_view job_id, int iteration, absl::string_view parent_id, int plan_index,
                        int sample_index) {
  std::string digest =
      core::Sha256Hex(absl::StrCat(job_id, "|", iteration, "|", parent_id, "|", plan_index, "|", sample_index));
  return absl::StrFormat("i%03d-%s", iteration, digest.substr(0, 12));
}

int64_t CandidateOrdinal(int iteration, int parent_rank, int plan_index, int sample_index) {
  return (static_cast<int64_t>(iteration) << 16) | (static_cast<int64_t>(parent_rank) << 10) |
         (static_cast<int64_t>(plan_index) << 4) | sample_index;
}

uint64_t DeriveSeed(uint64_t job_seed, absl::string_view purpose, int iteration, absl::string_view parent, int index) {
  std::string digest = core::Sha256Hex(absl::StrCat(job_seed, "|", purpose, "|", iteration, "|", parent, "|", index));
  uint64_t seed = 0;
  (void)absl::SimpleHexAtoi(absl::string_view(digest).substr(0, 16), &seed);
  return seed;
}

}  // namespace accelopt::orchestrator

// Deterministic identities of the search: candidate ids, logical creation order, and the seeds of every
// random choice, all derived from (job, iteration, parent, plan, sample) so a resumed job finds its work.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace accelopt::orchestrator {

// Id of the baseline candidate (iteration 0).
inline constexpr char kBaselineCandidateId[] = "i000-baseline";

// "i<iteration, 3 digits>-<first 12 hex digits of sha256(job|iteration|parent|plan|sample)>".
std::string CandidateId(absl::string_view job_id, int iteration, absl::string_view parent_id, int plan_index,
                        int sample_index);

// Logical creation order: iteration, then the parent's place in the beam, then plan, then sample.
// Requires parent_rank < 64, plan_index < 64, sample_index < 16 (the spec limits); the baseline is 0.
int64_t CandidateOrdinal(int iteration, int parent_rank, int plan_index, int sample_index);

// A seed for one random choice: the first 64 bits of sha256(job_seed|purpose|iteration|parent|index). The
// engine names the parent by its kernel's sha256, so the same seed replays the same search in another job.
uint64_t DeriveSeed(uint64_t job_seed, absl::string_view purpose, int iteration, absl::string_view parent, int index);

}  // namespace accelopt::orchestrator

// Next-beam selection (accelopt-algorithm.md section 1.3, with this project's fixes): the pool is the
// parents AND their children, only correct (OK) kernels compete, ranked by latency, identical kernels
// (same hash) count once, ties go to the earlier candidate, and B are kept.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/job.pb.h"

namespace accelopt::orchestrator {

// Ids of at most `beam_width` candidates of `pool`, best first. Candidates without a VERDICT_OK result are
// ignored; among candidates with the same kernel sha256 only the best (then earliest) one is kept; ties in
// latency are broken by Candidate.ordinal. Empty when no candidate of the pool is OK.
std::vector<std::string> SelectBeam(const std::vector<const v1::Candidate*>& pool, int beam_width);

// True when `candidate` is a correct kernel that beats `best` (the job's best so far, null when there is none):
// faster, or as fast and earlier in the creation order, so the best does not depend on arrival order.
bool IsNewBest(const v1::Candidate* best, const v1::Candidate& candidate);

}  // namespace accelopt::orchestrator

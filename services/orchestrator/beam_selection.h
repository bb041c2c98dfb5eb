// Next-beam selection (accelopt-algorithm.md section 1.3, with this project's fixes): only correct (OK)
// kernels compete, ranked by latency, identical kernels (same hash) count once, ties go to the earlier
// candidate, the parents compete with their children, and B are kept. The policy (SearchParams.beam_policy)
// decides the rest; each policy is one function below. A new policy adds an enum value in job.proto, one
// function here and one case in SelectBeam.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/job.pb.h"

namespace accelopt::orchestrator {

// The candidates an iteration ends with.
struct BeamPool {
  // The iteration's beam, in rank order; may hold the same candidate more than once (parent copies).
  std::vector<const v1::Candidate*> parents;
  // Every candidate created in the iteration.
  std::vector<const v1::Candidate*> children;
};

// The next beam under `policy` (UNSPECIFIED means REFERENCE): candidate ids, best first, at most
// `beam_width` (the same id may appear several times under REFERENCE).
std::vector<std::string> SelectBeam(v1::BeamPolicy policy, const BeamPool& pool, int beam_width);

// BEAM_POLICY_DISTINCT: the at most `beam_width` fastest distinct correct kernels among parents and all
// children. Empty when none of them is OK.
std::vector<std::string> SelectDistinctBeam(const BeamPool& pool, int beam_width);

// BEAM_POLICY_REFERENCE: each (parent, plan) branch contributes only its fastest correct sample (best-of-K);
// those winners and the parents are ranked as in SelectDistinctBeam; when fewer than `beam_width` distinct
// kernels are correct, the beam is padded with copies of the parents in their rank order (cycling), so it
// always holds `beam_width` entries while any parent is correct.
std::vector<std::string> SelectReferenceBeam(const BeamPool& pool, int beam_width);

// True when `candidate` is a correct kernel that beats `best` (the job's best so far, null when there is none):
// faster, or as fast and earlier in the creation order, so the best does not depend on arrival order.
bool IsNewBest(const v1::Candidate* best, const v1::Candidate& candidate);

}  // namespace accelopt::orchestrator

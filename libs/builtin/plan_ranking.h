// How the builtin planner orders the transformations that apply to a kernel: by what the profile says is the
// bottleneck, by what the memory has seen pay off (or regress), and by seeded exploration noise.
#pragma once

#include <cstdint>
#include <vector>

#include "accelopt/v1/common.pb.h"
#include "libs/builtin/rewriter.h"

namespace accelopt::builtin {

struct RankedCandidate {
  RewriteCandidate candidate;
  double score = 0;            // without the exploration noise
  double memory_evidence = 0;  // the memory's contribution to `score`
};

// Highest first. Deterministic for the same inputs and `seed`; a different seed may reorder candidates
// whose scores are close (exploration), never ones far apart. On a trn1 profile (DEVICE_SIM_TRN1), where VectorE
// and GpSimd share the SBUF port, moves of element-wise work between VectorE and GpSimd are left out: they offload
// nothing (a move to GpSimd of work the compiler would put on ScalarE or VectorE is kept).
std::vector<RankedCandidate> RankCandidates(const std::vector<RewriteCandidate>& candidates,
                                            const v1::ProfileResult& profile,
                                            const std::vector<v1::Experience>& experiences, uint64_t seed);

}  // namespace accelopt::builtin

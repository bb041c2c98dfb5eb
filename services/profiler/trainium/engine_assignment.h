// Which engines may run an instruction: the engine the program named, or for `eng=auto` the choices
// the compiler makes (reference section 3.5): activations and PSUM evictions on ACT; tensor_scalar
// and SBUF copies on ACT or DVE (the scheduler picks by finish time, with a device-set preference
// for ACT); elementwise binary ops, reductions, reciprocal and scans on DVE; memset on DVE or Pool;
// iota and affine_select on Pool; matmul-family ops on PE, except a transpose the program put on DVE
// (nc_transpose(engine=vector)); DMA ops on the DMA queues.
#pragma once

#include "absl/container/inlined_vector.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Candidate engines in preference order (ties go to the first). Never empty, never contains kAuto.
absl::InlinedVector<Engine, 2> CandidateEngines(const Instruction& inst);

}  // namespace accelopt::trainium

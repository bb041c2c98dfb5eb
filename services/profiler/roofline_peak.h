// Percentage of peak and bound of a measured latency against the Trainium roofline, for the backends that
// report it.
#pragma once

#include "accelopt/v1/common.pb.h"
#include "services/profiler/trainium/roofline.h"

namespace accelopt::profiler {

trainium::RooflineTerms RooflineTermsOf(const v1::Roofline& roofline);

// Sets `peak_percent` and `bound` of `result`.
void FillPeak(const trainium::RooflineResult& roofline, v1::ProfileResult* result);

}  // namespace accelopt::profiler

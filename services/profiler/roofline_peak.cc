#include "services/profiler/roofline_peak.h"

namespace accelopt::profiler {

trainium::RooflineTerms RooflineTermsOf(const v1::Roofline& roofline) {
  return {roofline.vector_flops(), roofline.matmul_flops(), roofline.hbm_bytes()};
}

void FillPeak(const trainium::RooflineResult& roofline, v1::ProfileResult* result) {
  result->set_peak_percent(roofline.percent_of_peak);
  switch (roofline.bound) {
    case trainium::RooflineBound::kMemory:
      result->set_bound(v1::BOUND_MEMORY);
      break;
    case trainium::RooflineBound::kMatmul:
      result->set_bound(v1::BOUND_MATMUL);
      break;
    case trainium::RooflineBound::kVector:
      result->set_bound(v1::BOUND_VECTOR);
      break;
  }
}

}  // namespace accelopt::profiler

// The DMA queues of a NeuronCore. A DMA is split over `queues` queues that transfer their shares
// side by side. The compiler places DMA triggers where their data is ready rather than in program
// order (it software-pipelines affine_range loops), so a DMA fills the idle time of enough queues
// from when its inputs are ready, piece by piece (backfilling gaps left by DMAs booked before it,
// within a bounded look-back), instead of waiting for one window that holds it whole. Completion
// adds a fixed latency that overlaps with other transfers.
#pragma once

#include <utility>
#include <vector>

#include "services/profiler/trainium/cost_model.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/engine_timeline.h"

namespace accelopt::trainium {

// Not thread-safe; used by one scheduling pass.
class DmaQueues {
 public:
  explicit DmaQueues(const DeviceParams& params);

  struct Issued {
    double start_ns = 0;
    double transfer_end_ns = 0;  // queues are busy until here
    double completion_ns = 0;    // data visible to dependants
  };

  // Issues a DMA that may start at `earliest_ns` (its inputs are ready).
  Issued Issue(const DmaCost& cost, double earliest_ns);

  // Time during which at least one queue was transferring (union of busy intervals).
  double BusyUnionNs() const;

 private:
  double fixed_latency_ns_;
  std::vector<EngineTimeline> queues_;                // busy intervals of each queue, for backfilling
  std::vector<std::pair<double, double>> intervals_;  // every transfer, for the busy-time union
};

}  // namespace accelopt::trainium

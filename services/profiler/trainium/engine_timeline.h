// The busy intervals of one engine: a compute engine (PE, ACT, DVE, Pool) or a DMA queue. The compiler
// schedules the instructions of independent work (the iterations of an unrolled `affine_range`) around each
// other, so an instruction whose inputs are ready early may run in an idle gap that later-ready instructions
// placed before it left on its engine, within a bounded look-back. Dependencies are the caller's: it asks
// for the earliest start at or after the time the inputs are ready.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace accelopt::trainium {

// Not thread-safe; used by one scheduling pass.
class EngineTimeline {
 public:
  // `look_back`: busy intervals kept for backfilling; older ones merge into a horizon before which
  // the engine counts as busy. 0 keeps none: every instruction starts after the engine's last one.
  explicit EngineTimeline(size_t look_back);

  // Earliest start at or after `ready_ns` of an instruction taking `duration_ns`.
  double EarliestStart(double ready_ns, double duration_ns) const;

  // When the engine is idle at or after `t_ns`: `t_ns` itself, or the end of the busy run that holds it.
  double BusyUntil(double t_ns) const;

  // When the engine, idle at `t_ns` (BusyUntil(t_ns) == t_ns), next turns busy; infinity if never.
  double IdleUntil(double t_ns) const;

  // Books [start_ns, end_ns) as busy.
  void Book(double start_ns, double end_ns);

 private:
  size_t look_back_;
  std::vector<std::pair<double, double>> busy_;  // sorted by start, disjoint
  double horizon_ns_ = 0;
};

}  // namespace accelopt::trainium

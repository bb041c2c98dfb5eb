// List scheduler of a trace on modelled NeuronCores (reference section 3.4). Each core (`core` keys
// of a multi-core SPMD launch, else one) has its own engines, DMA queues, SBUF and PSUM; on a core the compute engines
// PE, ACT, DVE and Pool issue in program order; DMAs take the earliest window in which enough of
// the 16 queues are idle (see dma_queues.h). An instruction starts at max(engine free, dependencies
// ready + semaphore latency when they ran on another engine) and also waits for its storage (ring
// slot, PSUM banks, SBUF room and any reload, see buffer_rings.h, psum_banks.h, sbuf_residency.h).
// `eng=auto` ops take the candidate engine that finishes them first (engine_assignment.h);
// CSE-eliminated instructions cost nothing. Deterministic: the same trace and parameters give the
// same schedule.
#pragma once

#include <cstdint>
#include <vector>

#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

struct ScheduledInstruction {
  Engine engine = Engine::kAuto;  // kAuto when eliminated (cse=1, or a load replaced by re-materialisation)
  double start_ns = 0;
  double end_ns = 0;            // for DMAs: completion including the fixed latency
  bool output_to_psum = false;  // an SBUF-declared output left in PSUM (staged ACT output, PE broadcast)
};

// HBM traffic the compiler adds under SBUF pressure (bytes).
struct MemoryTraffic {
  int64_t rematerialized_bytes = 0;  // re-loads of evicted unmodified HBM copies
  int64_t spill_save_bytes = 0;
  int64_t spill_reload_bytes = 0;
};

// Time each engine spent executing (for DMA: the union over queues of transfer intervals), per
// NeuronCore on average over the cores of the trace.
struct EngineBusy {
  double pe_ns = 0;
  double act_ns = 0;
  double dve_ns = 0;
  double pool_ns = 0;
  double dma_ns = 0;
};

struct Schedule {
  std::vector<ScheduledInstruction> instructions;  // parallel to Trace::instructions
  double makespan_ns = 0;                          // last completion, launch overhead not included
  EngineBusy busy;
  MemoryTraffic traffic;
  int64_t eliminated_instructions = 0;
  int64_t psum_bank_overflows = 0;
  double peak_sbuf_live_bytes_pp = 0;
  int demoted_sbuf_sites = 0;
  int sbuf_ring_depth = 0;  // smallest ring depth of any declaration site
  int cores = 1;            // NeuronCores the trace's programs ran on, each with its own engines and memory
};

Schedule ScheduleTrace(const Trace& trace, const DeviceParams& params);

}  // namespace accelopt::trainium

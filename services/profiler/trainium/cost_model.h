// Per-instruction costs of the NeuronCore engines (reference nki-and-trainium.md section 3.2
// and 3.3): compute instruction durations from the nki.isa "estimated instruction cost" formulas
// plus fixed overheads, and DMA transfer times from descriptor efficiency, queue split and queue
// bandwidth.
#pragma once

#include <cstdint>

#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/trace.h"

namespace accelopt::trainium {

// Clock of a compute engine (PE, ACT, DVE or Pool).
double EngineClockHz(Engine engine, const DeviceParams& params);

// Cycles of a compute instruction on `engine` (one of PE, ACT, DVE, Pool), including the engine's
// fixed per-instruction overhead. Independent of the partition count: all lanes run in parallel.
double InstructionCycles(const Instruction& inst, Engine engine, const DeviceParams& params);

// InstructionCycles converted to nanoseconds with the engine's clock.
double InstructionDurationNs(const Instruction& inst, Engine engine, const DeviceParams& params);

// Descriptor efficiency of a DMA whose contiguous runs are `run_bytes` long: run / (run + b0).
double DmaEfficiency(int64_t run_bytes, const DeviceParams& params);

// How one DMA is split over the queues and how long each queue is busy moving its share.
struct DmaCost {
  int queues = 1;            // ceil(partitions / partitions_per_queue), at most dma_queues
  double queue_busy_ns = 0;  // transfer of bytes/queues at the queue bandwidth times efficiency, plus overhead
};

// Cost of moving `bytes` spread over `partitions` partitions in contiguous runs of `run_bytes` (0 =
// one run per partition). `hbm_sides` counts the DMA's sides in HBM (0, 1, or 2 for an HBM-to-HBM
// copy, which reads and writes every byte in HBM): a queue moves at most hbm_bytes_per_ns /
// dma_queues / hbm_sides, so all queues together never exceed the core's HBM share.
DmaCost ComputeDmaCost(int partitions, int64_t bytes, int64_t run_bytes, int hbm_sides, const DeviceParams& params);

}  // namespace accelopt::trainium

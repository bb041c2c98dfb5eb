#include "services/profiler/trainium/scheduler.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "services/profiler/trainium/buffer_rings.h"
#include "services/profiler/trainium/cost_model.h"
#include "services/profiler/trainium/dma_queues.h"
#include "services/profiler/trainium/engine_assignment.h"
#include "services/profiler/trainium/engine_timeline.h"
#include "services/profiler/trainium/psum_banks.h"
#include "services/profiler/trainium/sbuf_residency.h"

namespace accelopt::trainium {
namespace {

// Busy intervals kept per compute engine for backfilling (as many as the DMA queues keep).
constexpr size_t kEngineLookBack = 32;

bool TouchesSbuf(const Instruction& inst) {
  if (inst.has_output && inst.output.buffer == Buffer::kSbuf) return true;
  return std::any_of(inst.inputs.begin(), inst.inputs.end(),
                     [](const Operand& o) { return o.buffer == Buffer::kSbuf; });
}

// Per-allocation timing state.
struct AllocTiming {
  double storage_ready_ns = 0;  // writers wait for this (ring slot, PSUM banks, SBUF room)
  double last_use_end_ns = 0;
  double last_write_end_ns = 0;
  double saved_ns = 0;  // completion of the latest spill save
};

// One scheduling pass over a trace. Not thread-safe; create one per call.
class ListScheduler {
 public:
  ListScheduler(const Trace& trace, const DeviceParams& params)
      : trace_(trace),
        params_(params),
        allocs_(trace.allocations.size()),
        feeds_dve_binary_(trace.instructions.size(), false) {
    const int cores = CoreCount(trace);
    cores_.reserve(cores);
    for (int core = 0; core < cores; ++core) cores_.emplace_back(trace, params, core);
    if (params.act_outputs_to_psum_for_dve > 0) {
      for (const Instruction& inst : trace.instructions) {
        if (inst.cse || (inst.op != Op::kTensorTensor && inst.op != Op::kLoopReduce)) continue;
        if (CandidateEngines(inst)[0] != Engine::kDve) continue;
        for (int32_t dep : inst.deps) feeds_dve_binary_[dep] = true;
      }
    }
  }

  Schedule Run();

 private:
  // Engines, DMA queues and on-chip memory of one NeuronCore. The cores of a multi-core launch share
  // nothing but the device HBM, of which each core's queues draw at most its share
  // (`hbm_bytes_per_ns`, see cost_model.h).
  struct Core {
    Core(const Trace& trace, const DeviceParams& params, int index)
        : dma(params),
          psum(static_cast<int>(params.psum_banks), static_cast<int64_t>(params.psum_bank_bytes)),
          sbuf(trace, params.sbuf_bytes_pp - params.sbuf_reserve_bytes_pp,
               static_cast<int>(std::lround(params.spill_reuse_window_instructions))),
          rings(trace, static_cast<int>(std::lround(params.sbuf_ring_depth)),
                params.sbuf_bytes_pp - params.sbuf_reserve_bytes_pp, index) {}
    DmaQueues dma;
    PsumBanks psum;
    SbufResidency sbuf;
    BufferRings rings;
    EngineTimeline pe{kEngineLookBack};
    EngineTimeline act{kEngineLookBack};
    EngineTimeline dve{kEngineLookBack};
    EngineTimeline pool{kEngineLookBack};
    EngineTimeline sbuf_port{kEngineLookBack};  // VectorE/GpSimd SBUF port (dve_pool_shared_sbuf_port)

    EngineTimeline& Timeline(Engine engine) {
      return engine == Engine::kPe ? pe : engine == Engine::kAct ? act : engine == Engine::kDve ? dve : pool;
    }
  };

  Core& CoreOf(const Instruction& inst) { return cores_[inst.core]; }
  Core& CoreOf(int32_t alloc) { return cores_[trace_.allocations[alloc].core]; }
  void FreeAllocation(int32_t alloc);
  void PlaceAllocation(int32_t alloc);
  // Issues the DMA of one model-added transfer that may start at `earliest_ns`; returns its
  // completion.
  double IssueTransfer(const SbufResidency::Transfer& transfer, double earliest_ns);
  void ScheduleInstruction(int32_t index);
  double ReadyTime(const Instruction& inst, Engine engine) const;

  const Trace& trace_;
  const DeviceParams& params_;
  std::vector<Core> cores_;
  std::vector<AllocTiming> allocs_;
  std::vector<bool> feeds_dve_binary_;  // read by a DVE tensor_tensor / loop_reduce
  Schedule schedule_;
  std::vector<SbufResidency::Transfer> transfers_;
  std::vector<int32_t> displaced_;
};

double ListScheduler::IssueTransfer(const SbufResidency::Transfer& transfer, double earliest_ns) {
  const Allocation& a = trace_.allocations[transfer.alloc];
  const int64_t run = std::max<int64_t>(1, transfer.bytes / std::max(a.partitions, 1));
  const DmaCost cost = ComputeDmaCost(a.partitions, transfer.bytes, run, 1, params_);
  const DmaQueues::Issued issued = CoreOf(transfer.alloc).dma.Issue(cost, earliest_ns);
  schedule_.makespan_ns = std::max(schedule_.makespan_ns, issued.completion_ns);
  switch (transfer.kind) {
    case SbufResidency::Transfer::Kind::kSpillSave:
      schedule_.traffic.spill_save_bytes += transfer.bytes;
      allocs_[transfer.alloc].saved_ns = issued.completion_ns;
      break;
    case SbufResidency::Transfer::Kind::kSpillReload:
      schedule_.traffic.spill_reload_bytes += transfer.bytes;
      break;
    case SbufResidency::Transfer::Kind::kRematerialize:
      schedule_.traffic.rematerialized_bytes += transfer.bytes;
      break;
  }
  return issued.completion_ns;
}

void ListScheduler::FreeAllocation(int32_t alloc) {
  const Allocation& a = trace_.allocations[alloc];
  const double last_use = allocs_[alloc].last_use_end_ns;
  Core& core = CoreOf(alloc);
  if (a.buffer == Buffer::kPsum) {
    core.psum.Release(alloc, last_use);
  } else {
    core.sbuf.Free(alloc);
    core.rings.Release(alloc, last_use);
  }
}

void ListScheduler::PlaceAllocation(int32_t alloc) {
  const Allocation& a = trace_.allocations[alloc];
  AllocTiming& timing = allocs_[alloc];
  Core& core = CoreOf(alloc);
  if (a.buffer == Buffer::kPsum) {
    timing.storage_ready_ns = core.psum.Acquire(alloc, a.bytes_pp);
    return;
  }
  if (!core.sbuf.Tracked(alloc)) return;
  transfers_.clear();
  displaced_.clear();
  core.sbuf.Allocate(alloc, &transfers_, &displaced_);
  double ready = core.rings.Place(alloc);
  // Space of demoted tiles is free once they were last used and, if modified, saved.
  for (int32_t victim : displaced_) ready = std::max(ready, allocs_[victim].last_use_end_ns);
  for (const SbufResidency::Transfer& save : transfers_) {
    ready = std::max(ready, IssueTransfer(save, allocs_[save.alloc].last_write_end_ns));
  }
  timing.storage_ready_ns = ready;
}

double ListScheduler::ReadyTime(const Instruction& inst, Engine engine) const {
  double ready = 0;
  for (int32_t dep : inst.deps) {
    const ScheduledInstruction& d = schedule_.instructions[dep];
    const bool same_engine = d.engine == engine && trace_.instructions[dep].core == inst.core;
    ready = std::max(ready, d.end_ns + (same_engine ? 0.0 : params_.sync_latency_ns));
  }
  return ready;
}

void ListScheduler::ScheduleInstruction(int32_t index) {
  const Instruction& inst = trace_.instructions[index];
  ScheduledInstruction& out = schedule_.instructions[index];
  Core& core = CoreOf(inst);
  if (inst.cse || core.sbuf.Elided(inst)) {
    // Eliminated: a CSE repeat takes the earlier identical result; a load into a streamed tile is
    // replaced by the re-loads at its uses. Either way the data is available when the inputs are.
    double ready = 0;
    for (int32_t dep : inst.deps) ready = std::max(ready, schedule_.instructions[dep].end_ns);
    out = {Engine::kAuto, ready, ready};
    ++schedule_.eliminated_instructions;
    for (int32_t a : inst.write_allocs) allocs_[a].last_write_end_ns = std::max(allocs_[a].last_write_end_ns, ready);
    if (!inst.cse) {
      transfers_.clear();
      core.sbuf.AfterInstruction(index, inst, /*elided=*/true, &transfers_);
    }
    return;
  }

  // Storage: reloads of streamed operands, ring slots, PSUM banks and SBUF room of written
  // allocations.
  double storage_ready = 0;
  transfers_.clear();
  core.sbuf.BeforeInstruction(index, inst, &transfers_);
  for (const SbufResidency::Transfer& reload : transfers_) {
    const double earliest = reload.kind == SbufResidency::Transfer::Kind::kSpillReload
                                ? allocs_[reload.alloc].saved_ns
                                : allocs_[reload.alloc].last_write_end_ns;
    storage_ready = std::max(storage_ready, IssueTransfer(reload, earliest));
  }
  for (int32_t a : inst.write_allocs) storage_ready = std::max(storage_ready, allocs_[a].storage_ready_ns);

  const absl::InlinedVector<Engine, 2> candidates = CandidateEngines(inst);
  if (candidates[0] == Engine::kDma) {
    // HBM sides of the transfer: a load or store has one; a copy from HBM to HBM reads and writes
    // every byte there, so its bytes take twice their share of the HBM bandwidth.
    const bool reads_hbm =
        std::any_of(inst.inputs.begin(), inst.inputs.end(), [](const Operand& o) { return o.buffer == Buffer::kHbm; });
    const bool writes_hbm = inst.has_output && inst.output.buffer == Buffer::kHbm;
    const int hbm_sides = inst.dma_direction != DmaDirection::kCopy ? 1 : int{reads_hbm} + int{writes_hbm};
    const int64_t run = inst.dma_run > 0 ? inst.dma_run : inst.dma_bytes / inst.partitions;
    const DmaCost cost = ComputeDmaCost(inst.partitions, inst.dma_bytes, run, hbm_sides, params_);
    const DmaQueues::Issued issued = core.dma.Issue(cost, std::max(ReadyTime(inst, Engine::kDma), storage_ready));
    out = {Engine::kDma, issued.start_ns, issued.completion_ns};
  } else {
    // A DVE binary op reading an output left in PSUM (see output_to_psum below) runs at one element
    // per cycle.
    const bool staged_input =
        !inst.inputs.empty() && std::any_of(inst.deps.begin(), inst.deps.end(),
                                            [this](int32_t dep) { return schedule_.instructions[dep].output_to_psum; });
    Instruction staged;
    if (staged_input) {
      staged = inst;
      staged.inputs[0].buffer = Buffer::kPsum;
    }
    const Instruction& costed = staged_input ? staged : inst;
    // On trn1 VectorE and GpSimd cannot access SBUF at the same time: an SBUF instruction of one
    // waits for the other's (a split of VectorE work onto GpSimd buys nothing there).
    const bool shares_sbuf_port = params_.dve_pool_shared_sbuf_port > 0 && TouchesSbuf(inst);
    double best_rank = 0;
    for (Engine engine : candidates) {
      const double ready = std::max(ReadyTime(inst, engine), storage_ready);
      const double duration = InstructionDurationNs(costed, engine, params_);
      double start = core.Timeline(engine).EarliestStart(ready, duration);
      if (shares_sbuf_port && (engine == Engine::kDve || engine == Engine::kPool)) {
        // The earliest time both the engine and the port are idle for the whole instruction.
        for (double port_start = core.sbuf_port.EarliestStart(start, duration); port_start != start;
             port_start = core.sbuf_port.EarliestStart(start, duration)) {
          start = core.Timeline(engine).EarliestStart(port_start, duration);
        }
      }
      const double end = start + duration;
      // Flexible ops go to ACT unless another engine finishes them more than act_preference_ns
      // earlier.
      const double rank = engine == Engine::kAct ? end - params_.act_preference_ns : end;
      if (out.engine == Engine::kAuto || rank < best_rank) {
        out = {engine, start, end};
        best_rank = rank;
      }
    }
    // Outputs left in PSUM (one bank at most): ACT outputs the compiler stages there for a DVE binary
    // op, and partition broadcasts, which TensorE can only write to PSUM. A larger broadcast is
    // evacuated to SBUF, and its readers run at the SBUF rate.
    const bool fits_bank = inst.has_output && inst.output.buffer == Buffer::kSbuf &&
                           static_cast<double>(inst.output.bytes_pp) <= params_.psum_bank_bytes;
    const bool staged_act = out.engine == Engine::kAct && inst.op != Op::kCopy && feeds_dve_binary_[index];
    const bool pe_broadcast = out.engine == Engine::kPe && inst.op == Op::kBroadcast;
    out.output_to_psum = fits_bank && (staged_act || pe_broadcast);
    const double duration = out.end_ns - out.start_ns;
    if (shares_sbuf_port && (out.engine == Engine::kDve || out.engine == Engine::kPool)) {
      core.sbuf_port.Book(out.start_ns, out.end_ns);
    }
    core.Timeline(out.engine).Book(out.start_ns, out.end_ns);
    switch (out.engine) {
      case Engine::kPe:
        schedule_.busy.pe_ns += duration;
        break;
      case Engine::kAct:
        schedule_.busy.act_ns += duration;
        break;
      case Engine::kDve:
        schedule_.busy.dve_ns += duration;
        break;
      default:
        schedule_.busy.pool_ns += duration;
        break;
    }
  }
  schedule_.makespan_ns = std::max(schedule_.makespan_ns, out.end_ns);
  for (int32_t a : inst.read_allocs) allocs_[a].last_use_end_ns = std::max(allocs_[a].last_use_end_ns, out.end_ns);
  for (int32_t a : inst.write_allocs) {
    allocs_[a].last_use_end_ns = std::max(allocs_[a].last_use_end_ns, out.end_ns);
    allocs_[a].last_write_end_ns = std::max(allocs_[a].last_write_end_ns, out.end_ns);
  }
  transfers_.clear();
  core.sbuf.AfterInstruction(index, inst, /*elided=*/false, &transfers_);
  for (const SbufResidency::Transfer& save : transfers_) IssueTransfer(save, out.end_ns);
}

Schedule ListScheduler::Run() {
  const int32_t count = static_cast<int32_t>(trace_.instructions.size());
  schedule_.instructions.resize(count);
  schedule_.cores = static_cast<int>(cores_.size());
  schedule_.sbuf_ring_depth = cores_[0].rings.min_depth();
  for (const Core& core : cores_)
    schedule_.sbuf_ring_depth = std::min(schedule_.sbuf_ring_depth, core.rings.min_depth());
  std::vector<int32_t> frees(trace_.allocations.size());
  for (int32_t a = 0; a < static_cast<int32_t>(frees.size()); ++a) frees[a] = a;
  std::sort(frees.begin(), frees.end(), [this](int32_t x, int32_t y) {
    const Allocation& a = trace_.allocations[x];
    const Allocation& b = trace_.allocations[y];
    return std::tie(a.free_at, a.alloc_at, x) < std::tie(b.free_at, b.alloc_at, y);
  });
  size_t next_alloc = 0;
  size_t next_free = 0;
  // Before instruction i: frees of earlier allocations, then the allocations made at i, then those
  // of them that were freed before any instruction used them.
  auto free_until = [&](int32_t i, bool include_new) {
    while (next_free < frees.size()) {
      const Allocation& a = trace_.allocations[frees[next_free]];
      if (a.free_at > i || (!include_new && a.alloc_at >= i)) break;
      FreeAllocation(frees[next_free++]);
    }
  };
  for (int32_t i = 0; i <= count; ++i) {
    free_until(i, false);
    while (next_alloc < trace_.allocations.size() && trace_.allocations[next_alloc].alloc_at <= i) {
      PlaceAllocation(static_cast<int32_t>(next_alloc++));
    }
    free_until(i, true);
    if (i < count) ScheduleInstruction(i);
  }
  while (next_free < frees.size()) FreeAllocation(frees[next_free++]);
  for (const Core& core : cores_) {
    schedule_.busy.dma_ns += core.dma.BusyUnionNs();
    schedule_.psum_bank_overflows += core.psum.overflows();
    schedule_.peak_sbuf_live_bytes_pp = std::max(schedule_.peak_sbuf_live_bytes_pp, core.sbuf.peak_live_bytes_pp());
    schedule_.demoted_sbuf_sites += core.sbuf.demoted_sites();
  }
  // Busy time per core on average, so that activity stays a fraction of the latency.
  const double cores = static_cast<double>(cores_.size());
  for (double* busy : {&schedule_.busy.pe_ns, &schedule_.busy.act_ns, &schedule_.busy.dve_ns, &schedule_.busy.pool_ns,
                       &schedule_.busy.dma_ns}) {
    *busy /= cores;
  }
  return std::move(schedule_);
}

}  // namespace

Schedule ScheduleTrace(const Trace& trace, const DeviceParams& params) {
  ListScheduler scheduler(trace, params);
  return scheduler.Run();
}

}  // namespace accelopt::trainium

// Benchmarks of the Trainium timing model on a synthetic matmul-shaped trace of about 85k
// instructions (the size of the largest NKIBench kernel, gqa_full): reading, scheduling, and both.
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/timing_model.h"
#include "services/profiler/trainium/trace_reader.h"

namespace accelopt::trainium {
namespace {

// Per block: a load, a transpose, its PSUM eviction, `kMatmuls` accumulating matmuls, the result
// eviction and a store, with the allocation records of a generated kernel (fresh tiles per
// iteration, freed after last use).
std::string SyntheticTrace(int target_instructions) {
  constexpr int kMatmuls = 8;
  constexpr int kPerBlock = 5 + kMatmuls;
  const int blocks = target_instructions / kPerBlock;
  std::string body;
  body.reserve(static_cast<size_t>(blocks) * kPerBlock * 160);
  int id = 0;
  int alloc = 0;
  for (int b = 0; b < blocks; ++b) {
    const int tile = alloc++;
    const int psum_t = alloc++;
    const int tile_t = alloc++;
    const int psum_acc = alloc++;
    const int out = alloc++;
    const int load = id++;
    absl::StrAppend(&body, "A id=", tile, " buf=sbuf bytes_pp=4096 parts=128 site=10\n", "I id=", load,
                    " op=load eng=dma p=128 n=1024 dt=4 in=hbm:4096 out=sbuf:4096 wa=", tile,
                    " dir=load bytes=524288 run=4096 hbm=io line=11\n");
    const int transpose = id++;
    absl::StrAppend(&body, "A id=", psum_t, " buf=psum bytes_pp=512 parts=128 site=12\n", "I id=", transpose,
                    " op=transpose eng=pe p=128 n=128 nstat=128 dt=4 in=sbuf:512,const:512 out=psum:512 dep=", load,
                    " ra=", tile, " wa=", psum_t, " line=13\n");
    const int evict_t = id++;
    absl::StrAppend(&body, "A id=", tile_t, " buf=sbuf bytes_pp=512 parts=128 site=14\n", "I id=", evict_t,
                    " op=copy eng=auto p=128 n=128 dt=4 in=psum:512 out=sbuf:512 dep=", transpose, " ra=", psum_t,
                    " wa=", tile_t, " line=15\n", "F id=", psum_t, "\n");
    absl::StrAppend(&body, "A id=", psum_acc, " buf=psum bytes_pp=2048 parts=128 site=16\n");
    int previous = evict_t;
    for (int m = 0; m < kMatmuls; ++m) {
      const int mm = id++;
      absl::StrAppend(&body, "I id=", mm,
                      " op=matmul eng=pe p=128 n=512 nstat=128 dt=4 in=sbuf:512,sbuf:2048 out=psum:2048 dep=", previous,
                      " ra=", tile_t, ",", tile, " wa=", psum_acc, " acc=1 line=17\n");
      previous = mm;
    }
    absl::StrAppend(&body, "F id=", tile_t, "\nF id=", tile, "\n");
    const int evict = id++;
    absl::StrAppend(&body, "A id=", out, " buf=sbuf bytes_pp=2048 parts=128 site=18\n", "I id=", evict,
                    " op=copy eng=auto p=128 n=512 dt=4 in=psum:2048 out=sbuf:2048 dep=", previous, " ra=", psum_acc,
                    " wa=", out, " line=19\n", "F id=", psum_acc, "\n");
    absl::StrAppend(&body, "I id=", id++, " op=store eng=dma p=128 n=512 dt=4 in=sbuf:2048 out=hbm:2048 dep=", evict,
                    " ra=", out, " dir=store bytes=262144 run=2048 hbm=io line=20\n", "F id=", out, "\n");
  }
  return absl::StrCat("accelopt-trace 1\nM kernel=synthetic.py timing_only=1 instructions=", id, "\n", body);
}

const std::string& TraceText() {
  static const std::string* const text = new std::string(SyntheticTrace(85000));
  return *text;
}

void BM_ReadTrace(benchmark::State& state) {
  const std::string& text = TraceText();
  for (auto _ : state) {
    absl::StatusOr<Trace> trace = ParseTrace(text);
    if (!trace.ok()) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(trace);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ReadTrace)->Unit(benchmark::kMillisecond);

void BM_Schedule(benchmark::State& state) {
  absl::StatusOr<Trace> trace = ParseTrace(TraceText());
  absl::StatusOr<DeviceParams> device = BuiltinDeviceParams("trn1");
  if (!trace.ok() || !device.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  for (auto _ : state) {
    TimingResult result = RunTimingModel(*trace, *device, std::nullopt);
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace->instructions.size()));
}
BENCHMARK(BM_Schedule)->Unit(benchmark::kMillisecond);

void BM_ReadAndSchedule(benchmark::State& state) {
  absl::StatusOr<DeviceParams> device = BuiltinDeviceParams("trn1");
  if (!device.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<Trace> trace = ParseTrace(TraceText());
    if (!trace.ok()) {
      state.SkipWithError("parse failed");
      break;
    }
    TimingResult result = RunTimingModel(*trace, *device, std::nullopt);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_ReadAndSchedule)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accelopt::trainium

BENCHMARK_MAIN();

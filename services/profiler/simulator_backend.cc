// The simulator backends (sim-trn1, sim-trn2): one class parameterised by the Trainium device parameters.
// The sandboxed run executes the kernel on the NKI simulator (harness/run_kernel.py), which checks it and
// writes an instruction trace; measuring schedules that trace on the Trainium timing model.
#include <memory>

#include "absl/strings/str_cat.h"
#include "services/profiler/builtin_backends.h"
#include "services/profiler/roofline_peak.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/timing_model.h"
#include "services/profiler/trainium/trace_reader.h"

namespace accelopt::profiler {
namespace {

void FillTiming(const trainium::TimingResult& t, v1::ProfileResult* r) {
  auto* latency = r->mutable_latency();
  latency->set_mean_ms(t.latency_ms);
  latency->set_min_ms(t.latency_ms);
  latency->set_max_ms(t.latency_ms);
  latency->set_rel_diff(0);
  latency->set_runs(1);
  auto* c = r->mutable_counters();
  c->set_hbm_read_bytes(t.counters.hbm_read_bytes);
  c->set_hbm_write_bytes(t.counters.hbm_write_bytes);
  c->set_psum_read_bytes(t.counters.psum_read_bytes);
  c->set_psum_write_bytes(t.counters.psum_write_bytes);
  c->set_sbuf_read_bytes(t.counters.sbuf_read_bytes);
  c->set_sbuf_write_bytes(t.counters.sbuf_write_bytes);
  c->set_spill_reload_bytes(t.counters.spill_reload_bytes);
  c->set_spill_save_bytes(t.counters.spill_save_bytes);
  c->set_hardware_flops(t.counters.hardware_flops);
  c->set_transpose_flops(t.counters.transpose_flops);
  c->set_peak_flops_bandwidth_ratio(t.counters.peak_flops_bandwidth_ratio);
  c->set_mm_arithmetic_intensity(t.counters.mm_arithmetic_intensity);
  c->set_hfu_estimated_percent(t.counters.hfu_estimated_percent);
  c->set_scalar_engine_active_time_percent(t.counters.scalar_engine_active_time_percent);
  c->set_vector_engine_active_time_percent(t.counters.vector_engine_active_time_percent);
  c->set_gpsimd_engine_active_time_percent(t.counters.gpsimd_engine_active_time_percent);
  auto* e = r->mutable_engine_active();
  e->set_pe(t.active.pe);
  e->set_act(t.active.act);
  e->set_dve(t.active.dve);
  e->set_pool(t.active.pool);
  e->set_dma(t.active.dma);
  if (t.roofline.has_value()) FillPeak(*t.roofline, r);
}

class SimulatorBackend final : public DeviceBackend {
 public:
  // `target`: the harness's --target (trn1, trn2), the NeuronCore generation the kernel is told it runs on.
  SimulatorBackend(v1::Device device, std::string name, std::string target, trainium::DeviceParams params)
      : device_(device), name_(std::move(name)), target_(std::move(target)), params_(std::move(params)) {}

  v1::Device device() const override { return device_; }
  std::string name() const override { return name_; }
  std::string version() const override { return absl::StrCat(name_, " simulator, timing model v1"); }

  // The device parameters are loaded when the backend is created; the simulator needs nothing else.
  absl::Status CheckReady() const override { return absl::OkStatus(); }

  // The run step (ADR 0009): run_kernel.py records the kernel's program on input shapes; replay_check.py, in a
  // fresh sandbox without the kernel, executes, checks and traces it.
  BackendRunner Runner(const RunPaths& paths) const override {
    BackendRunner run;
    run.runner = "run_kernel.py";
    run.replay_runner = "replay_check.py";
    run.args = {"--trace-out", paths.work + "/trace.txt", "--target", target_};
    run.output_files = {"result.json", "trace.txt", "violation.json"};
    return run;
  }

  absl::Status Measure(const MeasureInput& input, v1::ProfileResult* result) const override {
    auto trace = trainium::ReadTraceFile(input.scratch + "/trace.txt");
    if (!trace.ok()) return absl::InternalError(absl::StrCat("timing model: ", trace.status().message()));
    std::optional<trainium::RooflineTerms> terms;
    if (input.roofline.has_value()) terms = RooflineTermsOf(*input.roofline);
    FillTiming(trainium::RunTimingModel(*trace, params_, terms), result);
    return absl::OkStatus();
  }

 private:
  const v1::Device device_;
  const std::string name_;
  const std::string target_;
  const trainium::DeviceParams params_;
};

BackendRegistration Simulator(v1::Device device, std::string name, std::string params_name) {
  auto create = [device, name,
                 params_name](const v1::ProfilerConfig&) -> absl::StatusOr<std::unique_ptr<DeviceBackend>> {
    auto params = trainium::BuiltinDeviceParams(params_name);
    if (!params.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("device ", name, ": ", params.status().message()));
    }
    return std::make_unique<SimulatorBackend>(device, name, params_name, *std::move(params));
  };
  return {device, std::move(name), std::move(create)};
}

}  // namespace

std::vector<BackendRegistration> SimulatorBackendRegistrations() {
  return {Simulator(v1::DEVICE_SIM_TRN1, "sim-trn1", "trn1"), Simulator(v1::DEVICE_SIM_TRN2, "sim-trn2", "trn2")};
}

}  // namespace accelopt::profiler

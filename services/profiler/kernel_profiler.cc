#include "services/profiler/kernel_profiler.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "libs/core/file.h"
#include "services/profiler/harness_result.h"
#include "services/profiler/trainium/roofline.h"
#include "services/profiler/trainium/timing_model.h"
#include "services/profiler/trainium/trace_reader.h"

namespace accelopt::profiler {
namespace {

namespace fs = std::filesystem;

v1::ProfileResult Verdict(v1::Verdict verdict, std::string message, int line = 0) {
  v1::ProfileResult r;
  r.set_verdict(verdict);
  r.set_message(std::move(message));
  r.set_line(line);
  return r;
}

// Removes the scratch directory on every path out of Profile().
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& root) {
    std::string tmpl = root + "/accelopt-profile-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ProblemYaml(const v1::Problem& problem) {
  if (!problem.metadata_yaml().empty()) return problem.metadata_yaml();
  std::string yaml = absl::StrCat("name: \"", problem.name().empty() ? "problem" : problem.name(), "\"\n");
  if (problem.tolerance() > 0) absl::StrAppend(&yaml, "tolerance: ", problem.tolerance(), "\n");
  if (problem.has_roofline()) {
    absl::StrAppendFormat(&yaml, "roofline: {vector_flops: %.17g, matmul_flops: %.17g, hbm_bytes: %.17g}\n",
                          problem.roofline().vector_flops(), problem.roofline().matmul_flops(),
                          problem.roofline().hbm_bytes());
  }
  return yaml;
}

// The last non-empty line of the program's output, for infrastructure errors.
std::string LastLine(const std::string& output) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::StripAsciiWhitespace(line).empty()) last = std::string(line);
  }
  return last;
}

std::string SandboxEnvValue(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

void FillPeak(const trainium::RooflineResult& roofline, v1::ProfileResult* r) {
  r->set_peak_percent(roofline.percent_of_peak);
  switch (roofline.bound) {
    case trainium::RooflineBound::kMemory:
      r->set_bound(v1::BOUND_MEMORY);
      break;
    case trainium::RooflineBound::kMatmul:
      r->set_bound(v1::BOUND_MATMUL);
      break;
    case trainium::RooflineBound::kVector:
      r->set_bound(v1::BOUND_VECTOR);
      break;
  }
}

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

std::string ExeDir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

std::string FirstExisting(const std::vector<std::string>& candidates, const std::string& file) {
  for (const auto& dir : candidates) {
    std::error_code ec;
    if (!dir.empty() && fs::exists(fs::path(dir) / file, ec)) return fs::weakly_canonical(dir, ec).string();
  }
  return candidates.back();
}

}  // namespace

std::string DeviceName(v1::Device device) {
  switch (device) {
    case v1::DEVICE_SIM_TRN2:
      return "sim-trn2";
    case v1::DEVICE_NEURON:
      return "neuron";
    default:
      return "sim-trn1";
  }
}

std::optional<v1::Device> ParseDeviceName(absl::string_view name) {
  for (v1::Device d : {v1::DEVICE_SIM_TRN1, v1::DEVICE_SIM_TRN2, v1::DEVICE_NEURON}) {
    if (name == DeviceName(d)) return d;
  }
  return std::nullopt;
}

std::string DefaultHarnessDir() {
  return FirstExisting({SandboxEnvValue("ACCELOPT_HARNESS_DIR"), ExeDir() + "/../share/accelopt/harness",
                        ACCELOPT_SOURCE_DIR "/services/profiler/harness"},
                       "run_kernel.py");
}

KernelProfiler::KernelProfiler(KernelProfilerOptions options) : options_(std::move(options)) {}

v1::ProfileResult KernelProfiler::Profile(const v1::Kernel& kernel, const v1::Problem& problem,
                                          const v1::ProfileOptions& options, int slot,
                                          const std::atomic<bool>* cancel) const {
  const double timeout = options.timeout_seconds() > 0 ? options.timeout_seconds() : options_.default_timeout_seconds;
  ScratchDir scratch(options_.scratch_root);
  if (scratch.path().empty()) {
    return Verdict(v1::VERDICT_INFRA_ERROR,
                   absl::StrCat("cannot create a scratch directory in ", options_.scratch_root));
  }
  const std::string reference_name =
      problem.reference_filename().empty() ? "reference.py" : problem.reference_filename();
  for (const auto& [name, contents] :
       std::vector<std::pair<std::string, std::string>>{{"kernel.py", kernel.source()},
                                                        {reference_name, problem.reference_source()},
                                                        {"problem.yaml", ProblemYaml(problem)}}) {
    if (auto s = core::WriteFileAtomic(scratch.path() + "/" + name, contents); !s.ok()) {
      return Verdict(v1::VERDICT_INFRA_ERROR, std::string(s.message()));
    }
  }

  sandbox::SandboxSpec spec;
  spec.scratch_dir = scratch.path();
  spec.read_only_binds = {{options_.harness_dir, "/harness"}};
  const bool sandboxed = options_.use_bwrap;
  const std::string harness = sandboxed ? "/harness" : options_.harness_dir;
  const std::string work = sandboxed ? "/scratch" : scratch.path();
  const bool neuron = options_.device == v1::DEVICE_NEURON;
  const std::string runner = neuron ? "/run_neuron.py" : "/run_kernel.py";
  spec.argv = {options_.python,     harness + "/harness_guard.py",
               work + "/kernel.py", harness + runner,
               "--problem",         work + "/" + reference_name,
               "--kernel",          work + "/kernel.py",
               "--metadata",        work + "/problem.yaml",
               "--result-out",      work + "/result.json",
               "--seeds",           absl::StrCat(options.seeds() > 0 ? options.seeds() : 5)};
  if (neuron) {
    spec.argv.insert(spec.argv.end(), {"--ntff-dir", work + "/ntff/round1", "--neff-out", work + "/kernel.neff"});
  } else {
    spec.argv.insert(spec.argv.end(), {"--trace-out", work + "/trace.txt"});
  }
  if (options.timing_only()) spec.argv.push_back("--timing-only");
  if (options.ban_low_precision()) spec.argv.push_back("--ban-low-precision");
  if (problem.tolerance() > 0) spec.argv.insert(spec.argv.end(), {"--tolerance", absl::StrCat(problem.tolerance())});
  spec.env = {{"PATH", "/usr/bin:/bin"},        {"HOME", work},
              {"PYTHONDONTWRITEBYTECODE", "1"}, {"PYTHONHASHSEED", "0"},
              {"OPENBLAS_NUM_THREADS", "1"},    {"OMP_NUM_THREADS", "1"}};
  // Older OpenBLAS builds need these on some processors to compute correctly.
  for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
    if (std::string v = SandboxEnvValue(name); !v.empty()) spec.env.emplace_back(name, v);
  }
  spec.limits = options_.limits;
  spec.timeout = absl::Seconds(timeout);
  spec.use_bwrap = options_.use_bwrap;
  spec.bwrap = options_.bwrap;
  spec.sandbox_uid = options_.sandbox_uid_base + slot;
  // The files the worker reads back; all else stays in the sandbox's size-limited /scratch. (The neuron runner
  // writes NTFF directories, so it keeps the host scratch directory.)
  if (!neuron) spec.output_files = {"result.json", "trace.txt", "violation.json"};
  if (neuron) {
    spec.device_binds = options_.neuron_devices;
    spec.env.insert(spec.env.end(), {{"NEURON_CC_FLAGS", "--auto-cast=none"},
                                     {"NEURON_RT_NUM_CORES", "1"},
                                     {"NEURON_RT_VISIBLE_CORES", absl::StrCat(options_.neuron_core)}});
  }

  auto outcome = sandbox::RunInSandbox(spec, cancel);
  if (!outcome.ok()) return Verdict(v1::VERDICT_INFRA_ERROR, std::string(outcome.status().message()));
  v1::ProfileResult result;
  auto violation = core::ReadFile(scratch.path() + "/violation.json");
  auto harness_json = core::ReadFile(scratch.path() + "/result.json");
  using Ending = sandbox::SandboxOutcome::Ending;
  if (violation.ok()) {
    SandboxViolation v = ParseViolationMarker(*violation);
    result = Verdict(v1::VERDICT_SANDBOX_VIOLATION,
                     absl::StrCat("kernel.py:", v.line, ": forbidden operation: ", v.detail), v.line);
  } else if (outcome->ending == Ending::kCancelled) {
    result = Verdict(v1::VERDICT_CANCELLED, "profile cancelled; the sandbox was killed");
  } else if (outcome->ending == Ending::kTimedOut) {
    result = Verdict(v1::VERDICT_TIMEOUT,
                     absl::StrFormat("exceeded the %.0f s deadline; killed with its whole process tree", timeout));
  } else if (outcome->ending == Ending::kSignaled && (outcome->signal == SIGXCPU || outcome->signal == SIGKILL)) {
    result = Verdict(v1::VERDICT_TIMEOUT,
                     absl::StrCat("exceeded its CPU-time limit of ", options_.limits.cpu_seconds, " s"));
  } else if (outcome->ending == Ending::kSignaled) {
    result = Verdict(v1::VERDICT_RUNTIME_ERROR,
                     absl::StrCat("crashed with signal ", outcome->signal, " (", strsignal(outcome->signal), ")"));
  } else if (!harness_json.ok()) {
    if (absl::StrContains(outcome->output, "MemoryError") ||
        absl::StrContains(outcome->output, "Cannot allocate memory")) {
      result = Verdict(v1::VERDICT_OUT_OF_MEMORY,
                       absl::StrCat("exceeded the sandbox's memory limit of ", options_.limits.memory_mb, " MiB"));
    } else {
      result = Verdict(v1::VERDICT_INFRA_ERROR, absl::StrCat("the harness wrote no result (exit code ",
                                                             outcome->exit_code, "): ", LastLine(outcome->output)));
    }
  } else if (auto parsed = ParseHarnessResult(*harness_json); !parsed.ok()) {
    result = Verdict(v1::VERDICT_INFRA_ERROR, std::string(parsed.status().message()));
  } else {
    result = Verdict(parsed->verdict, parsed->message, parsed->line);
    if (parsed->verdict == v1::VERDICT_OUT_OF_MEMORY) {
      result.set_message(
          absl::StrCat(parsed->message, " (the sandbox's memory limit of ", options_.limits.memory_mb, " MiB)"));
    }
    result.set_seeds_checked(parsed->seeds_checked);
    result.set_max_rel_l2(parsed->max_rel_l2);
    result.set_instructions(parsed->instructions);
    std::optional<trainium::RooflineTerms> terms;
    if (problem.has_roofline() || parsed->roofline.has_value()) {
      v1::Roofline rl = problem.has_roofline() ? problem.roofline() : *parsed->roofline;
      terms = trainium::RooflineTerms{rl.vector_flops(), rl.matmul_flops(), rl.hbm_bytes()};
    }
    if (parsed->verdict == v1::VERDICT_OK && neuron && !options.timing_only()) {
      MeasureOnNeuron(spec, scratch.path(), cancel, &result);
      auto trn1 = trainium::BuiltinDeviceParams("trn1");
      if (result.verdict() == v1::VERDICT_OK && terms.has_value() && trn1.ok()) {
        // Percentage of the Trainium-1 roofline, as AccelOpt reports it.
        FillPeak(trainium::ComputeRoofline(*terms, result.latency().mean_ms() * 1e6, *trn1), &result);
      }
    } else if (parsed->verdict == v1::VERDICT_OK && !neuron) {
      auto trace = trainium::ReadTraceFile(scratch.path() + "/trace.txt");
      auto device = trainium::BuiltinDeviceParams(options_.device == v1::DEVICE_SIM_TRN2 ? "trn2" : "trn1");
      if (!trace.ok() || !device.ok()) {
        result = Verdict(v1::VERDICT_INFRA_ERROR,
                         absl::StrCat("timing model: ", (!trace.ok() ? trace.status() : device.status()).message()));
      } else {
        FillTiming(trainium::RunTimingModel(*trace, *device, terms), &result);
      }
    }
  }
  result.set_device(options_.device);
  result.set_device_seconds(outcome->wall_seconds);
  result.set_worker(options_.worker_name);
  result.set_backend_version(neuron ? "neuron: Neuron SDK, neuron-profile"
                                    : absl::StrCat(DeviceName(options_.device), " simulator, timing model v1"));
  return result;
}

}  // namespace accelopt::profiler

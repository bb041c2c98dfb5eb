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
#include "services/profiler/program_path.h"

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

std::string DefaultHarnessDir() {
  return FirstExisting({SandboxEnvValue("ACCELOPT_HARNESS_DIR"), ExeDir() + "/../share/accelopt/harness",
                        ACCELOPT_SOURCE_DIR "/services/profiler/harness"},
                       "run_kernel.py");
}

KernelProfiler::KernelProfiler(KernelProfilerOptions options, std::unique_ptr<const DeviceBackend> backend)
    : options_(std::move(options)), backend_(std::move(backend)) {}

absl::Status KernelProfiler::CheckReady() const {
  if (options_.use_bwrap && !IsExecutableOnPath(options_.bwrap)) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox.bwrap: '", options_.bwrap, "' not found (install the bubblewrap package)"));
  }
  // The runner's file name does not depend on the paths.
  const std::string runner = backend_->Runner({options_.harness_dir, options_.scratch_root}).runner;
  std::error_code ec;
  if (!fs::exists(fs::path(options_.harness_dir) / runner, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("harness_dir: no ", runner, " in '", options_.harness_dir, "'"));
  }
  if (access(options_.python.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("python: '", options_.python, "' is not executable"));
  }
  return backend_->CheckReady();
}

sandbox::SandboxSpec KernelProfiler::RunSpec(const std::string& scratch, const std::string& reference_name,
                                             const v1::Problem& problem, const v1::ProfileOptions& options,
                                             double timeout, int slot) const {
  const bool sandboxed = options_.use_bwrap;
  const RunPaths paths{sandboxed ? "/harness" : options_.harness_dir, sandboxed ? "/scratch" : scratch};
  BackendRunner runner = backend_->Runner(paths);
  sandbox::SandboxSpec spec;
  spec.scratch_dir = scratch;
  spec.read_only_binds = {{options_.harness_dir, "/harness"}};
  spec.device_binds = std::move(runner.device_binds);
  spec.argv = {options_.python,
               paths.harness + "/harness_guard.py",
               paths.work + "/kernel.py",
               paths.harness + "/" + runner.runner,
               "--problem",
               paths.work + "/" + reference_name,
               "--kernel",
               paths.work + "/kernel.py",
               "--metadata",
               paths.work + "/problem.yaml",
               "--result-out",
               paths.work + "/result.json",
               "--seeds",
               absl::StrCat(options.seeds() > 0 ? options.seeds() : 5)};
  spec.argv.insert(spec.argv.end(), runner.args.begin(), runner.args.end());
  if (options.timing_only()) spec.argv.push_back("--timing-only");
  if (options.ban_low_precision()) spec.argv.push_back("--ban-low-precision");
  if (problem.tolerance() > 0) spec.argv.insert(spec.argv.end(), {"--tolerance", absl::StrCat(problem.tolerance())});
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", paths.work},          {"PYTHONDONTWRITEBYTECODE", "1"},
              {"PYTHONHASHSEED", "0"},   {"OPENBLAS_NUM_THREADS", "1"}, {"OMP_NUM_THREADS", "1"}};
  // Older OpenBLAS builds need these on some processors to compute correctly.
  for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
    if (std::string v = SandboxEnvValue(name); !v.empty()) spec.env.emplace_back(name, v);
  }
  spec.env.insert(spec.env.end(), runner.env.begin(), runner.env.end());
  spec.limits = options_.limits;
  spec.timeout = absl::Seconds(timeout);
  spec.use_bwrap = options_.use_bwrap;
  spec.bwrap = options_.bwrap;
  spec.sandbox_uid = 60000 + slot;
  return spec;
}

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

  const sandbox::SandboxSpec spec = RunSpec(scratch.path(), reference_name, problem, options, timeout, slot);
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
    if (parsed->verdict == v1::VERDICT_OK) {
      const std::optional<v1::Roofline> roofline =
          problem.has_roofline() ? std::optional<v1::Roofline>(problem.roofline()) : parsed->roofline;
      const MeasureInput input{*parsed, options, roofline, spec, scratch.path(), cancel};
      if (absl::Status s = backend_->Measure(input, &result); !s.ok()) {
        result = Verdict(v1::VERDICT_INFRA_ERROR, std::string(s.message()));
      }
    }
  }
  result.set_device(backend_->device());
  result.set_device_seconds(outcome->wall_seconds);
  result.set_worker(options_.worker_name);
  result.set_backend_version(backend_->version());
  return result;
}

}  // namespace accelopt::profiler

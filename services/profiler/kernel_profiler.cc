#include "services/profiler/kernel_profiler.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "libs/core/file.h"
#include "libs/core/resource_dir.h"
#include "services/profiler/harness_result.h"
#include "services/profiler/plausibility.h"
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

constexpr uintmax_t kMaxProgramBytes = uintmax_t{1} << 30;

// The two protocol steps of a backend with a trusted replay (docs/adr/0009-trusted-replay.md). `spec` is the
// single-process harness run as prepared (argv: python, harness_guard.py, kernel, run_kernel.py, harness arguments).
// Step A runs the kernel under the guard in `spec`'s scratch and only records its program (--program-out). The program
// is copied out once into `replay_dir`, next to fresh copies of the problem `files` (never the kernel's copies), and
// step B (replay_check.py, no kernel mounted, no guard needed) writes the only result.json and trace.txt that are read.
// Returns step A's outcome when it ended abnormally or left a violation marker (*result_dir is then its scratch).
absl::StatusOr<sandbox::SandboxOutcome> RunRecordAndReplay(
    const sandbox::SandboxSpec& spec, const std::string& work, const std::string& replay_dir,
    const std::vector<std::pair<std::string, std::string>>& files, const std::string& replay_runner,
    std::string* result_dir, const std::atomic<bool>* cancel) {
  const std::vector<std::string> harness_args(spec.argv.begin() + 4, spec.argv.end());
  sandbox::SandboxSpec record = spec;
  record.argv.resize(4);
  sandbox::SandboxSpec replay = spec;
  replay.scratch_dir = replay_dir;
  replay.argv = {spec.argv[0], absl::StrCat(fs::path(spec.argv[3]).parent_path().string(), "/", replay_runner)};
  for (size_t i = 0; i < harness_args.size(); ++i) {
    const std::string& arg = harness_args[i];
    const bool has_value = arg != "--timing-only" && arg != "--ban-low-precision" && i + 1 < harness_args.size();
    const std::vector<std::string> item =
        has_value ? std::vector<std::string>{arg, harness_args[i + 1]} : std::vector<std::string>{arg};
    if (has_value) ++i;
    const bool for_record =
        arg == "--problem" || arg == "--kernel" || arg == "--metadata" || arg == "--ban-low-precision";
    const bool for_replay = arg != "--kernel" && arg != "--ban-low-precision";
    if (for_record) record.argv.insert(record.argv.end(), item.begin(), item.end());
    if (for_replay) replay.argv.insert(replay.argv.end(), item.begin(), item.end());
  }
  record.argv.insert(record.argv.end(), {"--program-out", work + "/program.jsonl"});
  replay.argv.insert(replay.argv.end(), {"--program", work + "/program.jsonl"});
  if (!spec.output_files.empty()) {
    record.output_files = {"program.jsonl", "result.json", "violation.json"};
    replay.output_files = {"result.json", "trace.txt"};
  }
  *result_dir = spec.scratch_dir;
  auto recorded = sandbox::RunInSandbox(record, cancel);
  if (!recorded.ok() || recorded->ending != sandbox::SandboxOutcome::Ending::kExited ||
      fs::exists(spec.scratch_dir + "/violation.json")) {
    return recorded;
  }
  for (const auto& [name, contents] : files) {
    if (auto s = core::WriteFileAtomic(replay_dir + "/" + name, contents); !s.ok()) return s;
  }
  // Copied file to file (never through the worker's memory); an oversized program is replaced by a failure
  // entry that step B reports. A regular file only: a symlink planted by the kernel is not followed.
  const std::string program = spec.scratch_dir + "/program.jsonl";
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(program, ec))) {
    if (fs::file_size(program, ec) > kMaxProgramBytes) {
      auto s = core::WriteFileAtomic(
          replay_dir + "/program.jsonl",
          absl::StrCat(R"({"error": {"verdict": "RUNTIME_ERROR", "message": )", R"("the kernel's program exceeds )",
                       kMaxProgramBytes >> 20, R"( MiB", "line": 0}})", "\n"));
      if (!s.ok()) return s;
    } else if (!fs::copy_file(program, replay_dir + "/program.jsonl", ec)) {
      return absl::InternalError(absl::StrCat("copying the program out of the scratch: ", ec.message()));
    } else {
      // The kernel chose the source's mode bits; step B only needs to read the copy.
      fs::permissions(replay_dir + "/program.jsonl",
                      fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read,
                      ec);
    }
  }
  replay.timeout = std::max(absl::Seconds(1), spec.timeout - absl::Seconds(recorded->wall_seconds));
  auto replayed = sandbox::RunInSandbox(replay, cancel);
  if (replayed.ok()) replayed->wall_seconds += recorded->wall_seconds;
  *result_dir = replay_dir;
  return replayed;
}

}  // namespace

std::string DefaultHarnessDir() {
  if (std::string env = SandboxEnvValue("ACCELOPT_HARNESS_DIR"); !env.empty()) return env;
  return core::FindResourceDir("harness", "run_kernel.py");
}

KernelProfiler::KernelProfiler(KernelProfilerOptions options, std::unique_ptr<const DeviceBackend> backend)
    : options_(std::move(options)), backend_(std::move(backend)) {}

void KernelProfiler::AdoptWorkerSandbox(sandbox::WorkerSandbox worker_sandbox) {
  options_.harness_dir = worker_sandbox.harness.path();
  options_.sandbox_uid_base = worker_sandbox.uids.base();
  worker_sandbox_.emplace(std::move(worker_sandbox));
}

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

absl::Status KernelProfiler::CheckSandboxStarts() const {
  ScratchDir scratch(options_.scratch_root);
  if (scratch.path().empty()) {
    return absl::UnavailableError(absl::StrCat("cannot create a scratch directory in ", options_.scratch_root));
  }
  sandbox::SandboxSpec spec = RunSpec(scratch.path(), "reference.py", v1::Problem(), v1::ProfileOptions(),
                                      /*timeout=*/30, /*slot=*/0);
  spec.argv = {options_.python, "-c", "import numpy"};
  auto outcome = sandbox::RunInSandbox(spec, nullptr);
  if (!outcome.ok()) return outcome.status();
  if (outcome->ending != sandbox::SandboxOutcome::Ending::kExited || outcome->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the sandbox does not start (", options_.use_bwrap ? options_.bwrap : options_.python,
                     " exit code ", outcome->exit_code, "): ", LastLine(outcome->output)));
  }
  return absl::OkStatus();
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
  spec.sandbox_uid = options_.sandbox_uid_base + slot;
  // The files the worker reads back; all else stays in the sandbox's size-limited /scratch. Backends that list
  // none (neuron writes NTFF directories) keep the host scratch directory.
  spec.output_files = runner.output_files;
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
  const std::vector<std::pair<std::string, std::string>> problem_files = {{reference_name, problem.reference_source()},
                                                                          {"problem.yaml", ProblemYaml(problem)}};
  for (const auto& [name, contents] : problem_files) {
    if (auto s = core::WriteFileAtomic(scratch.path() + "/" + name, contents); !s.ok()) {
      return Verdict(v1::VERDICT_INFRA_ERROR, std::string(s.message()));
    }
  }
  if (auto s = core::WriteFileAtomic(scratch.path() + "/kernel.py", kernel.source()); !s.ok()) {
    return Verdict(v1::VERDICT_INFRA_ERROR, std::string(s.message()));
  }

  const sandbox::SandboxSpec spec = RunSpec(scratch.path(), reference_name, problem, options, timeout, slot);
  // Backends with a trusted replay run the kernel only to record its program; a fresh sandbox that never saw
  // the kernel replays, checks and traces it, and its result is the only one read.
  const std::string replay_runner = backend_->Runner({options_.harness_dir, scratch.path()}).replay_runner;
  std::optional<ScratchDir> replay_scratch;
  std::string result_dir = scratch.path();
  if (!replay_runner.empty()) {
    replay_scratch.emplace(options_.scratch_root);
    if (replay_scratch->path().empty()) {
      return Verdict(v1::VERDICT_INFRA_ERROR,
                     absl::StrCat("cannot create a scratch directory in ", options_.scratch_root));
    }
  }
  const std::string work = options_.use_bwrap ? "/scratch" : scratch.path();
  auto outcome = replay_runner.empty() ? sandbox::RunInSandbox(spec, cancel)
                                       : RunRecordAndReplay(spec, work, replay_scratch->path(), problem_files,
                                                            replay_runner, &result_dir, cancel);
  if (!outcome.ok()) return Verdict(v1::VERDICT_INFRA_ERROR, std::string(outcome.status().message()));
  v1::ProfileResult result;
  auto violation = core::ReadFile(scratch.path() + "/violation.json");
  auto harness_json = core::ReadFile(result_dir + "/result.json");
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
      const MeasureInput input{*parsed, options, roofline, spec, result_dir, cancel};
      if (absl::Status s = backend_->Measure(input, &result); !s.ok()) {
        result = Verdict(v1::VERDICT_INFRA_ERROR, std::string(s.message()));
      } else if (std::string why = ImplausibilityReason(result, parsed->output_bytes); !why.empty()) {
        // Kept with its measurements so the claim can be inspected, but never OK.
        result.set_verdict(v1::VERDICT_SUSPICIOUS);
        result.set_message(why);
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

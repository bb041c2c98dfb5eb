#include "services/profiler/kernel_profiler.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "libs/core/bounded_text.h"
#include "libs/core/file.h"
#include "libs/core/resource_dir.h"
#include "services/profiler/harness_result.h"
#include "services/profiler/plausibility.h"
#include "services/profiler/program_path.h"

namespace accelopt::profiler {
namespace {

namespace fs = std::filesystem;

// A result message is at most this long (the harness already cuts its own messages shorter): a kernel chooses the
// text of its errors and of the names a violation reports, and the reply must stay far below gRPC's limits.
constexpr size_t kMaxMessageBytes = 16 << 10;

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

constexpr int kProgramPipeBytes = 1 << 20;

// The two protocol steps of a backend with a trusted replay (docs/adr/0009-trusted-replay.md), run at the same
// time. `spec` is the single-process harness run as prepared (argv: python, harness_guard.py, kernel, run_kernel.py,
// harness arguments). Step A runs the kernel under the guard in `spec`'s scratch and writes its program into a pipe
// (its descriptor 3). Step B (replay_check.py, no guard needed) runs in a fresh sandbox holding fresh copies of the
// problem's `files` (never the kernel's copies) and the kernel's text as kernel.txt, which it only quotes in messages
// (`replay_work` is its scratch as it sees it); it reads the other end of the pipe (its descriptor 3), replays the
// program as it arrives and writes the only result.json and trace.txt that are read. Step B also sends step A the
// shapes of the inputs it builds through a second pipe (B's descriptor 4, A's 4), so that step A never builds them. The
// program never touches a disk; step B bounds its size. Once step B has finished, step A is no longer needed and is
// stopped. Returns step A's outcome when it ended abnormally on its own or left a violation marker (*result_dir is then
// its scratch), else step B's.
absl::StatusOr<sandbox::SandboxOutcome> RunRecordAndReplay(
    const sandbox::SandboxSpec& spec, const std::string& replay_dir, const std::string& replay_work,
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
    const bool for_record = arg == "--problem" || arg == "--kernel" || arg == "--metadata" ||
                            arg == "--ban-low-precision" || arg == "--target";
    const bool for_replay = arg != "--kernel";
    if (for_record) record.argv.insert(record.argv.end(), item.begin(), item.end());
    if (for_replay) replay.argv.insert(replay.argv.end(), item.begin(), item.end());
  }
  record.argv.insert(record.argv.end(), {"--program-out", "fd:3", "--input-specs", "fd:4"});
  replay.argv.insert(replay.argv.end(), {"--program", "fd:3", "--input-specs-out", "fd:4", "--kernel-source",
                                         replay_work + "/kernel.txt"});
  if (!spec.output_files.empty()) {
    record.output_files = {"result.json", "violation.json"};
    replay.output_files = {"result.json", "trace.txt"};
  }
  *result_dir = spec.scratch_dir;
  for (const auto& [name, contents] : files) {
    if (auto s = core::WriteFileAtomic(replay_dir + "/" + name, contents); !s.ok()) return s;
  }
  int program_pipe[2];
  int specs_pipe[2];
  if (pipe2(program_pipe, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot create the program pipe: ", std::strerror(errno)));
  }
  if (pipe2(specs_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    close(program_pipe[0]);
    close(program_pipe[1]);
    return absl::UnavailableError(absl::StrCat("cannot create the input-shapes pipe: ", std::strerror(error)));
  }
  // Step A writes on while step B executes a batch of steps (the default 64 KiB holds about 500 program lines; step
  // B reads them in batches of over a thousand). A smaller buffer (pipe-max-size) only makes step A wait more.
  fcntl(program_pipe[1], F_SETPIPE_SZ, kProgramPipeBytes);
  // Step A: program out (3), the inputs' shapes from step B in (4); step B: the other ends (harness
  // protocol/input_specs.py). RunInSandbox closes each end in the worker.
  record.pass_fds = {program_pipe[1], specs_pipe[0]};
  replay.pass_fds = {program_pipe[0], specs_pipe[1]};

  // Step A stops once step B has finished (B also ends on cancellation of the profile).
  std::atomic<bool> stop_record{false};
  absl::StatusOr<sandbox::SandboxOutcome> recorded = absl::UnknownError("step A did not run");
  std::thread recorder([&] { recorded = sandbox::RunInSandbox(record, &stop_record); });
  auto replayed = sandbox::RunInSandbox(replay, cancel);
  stop_record = true;
  recorder.join();
  if (!recorded.ok()) return recorded;
  const bool record_stopped_for_replay =
      recorded->ending == sandbox::SandboxOutcome::Ending::kCancelled && !(cancel != nullptr && cancel->load());
  if ((recorded->ending != sandbox::SandboxOutcome::Ending::kExited && !record_stopped_for_replay) ||
      fs::exists(spec.scratch_dir + "/violation.json")) {
    return recorded;
  }
  if (replayed.ok()) replayed->wall_seconds = std::max(replayed->wall_seconds, recorded->wall_seconds);
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
  options_.scratch_root = worker_sandbox.scratch.path();
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
  std::vector<std::pair<std::string, std::string>> replay_files = problem_files;
  replay_files.emplace_back("kernel.txt", kernel.source());
  auto outcome = replay_runner.empty() ? sandbox::RunInSandbox(spec, cancel)
                                       : RunRecordAndReplay(spec, replay_scratch->path(),
                                                            options_.use_bwrap ? "/scratch" : replay_scratch->path(),
                                                            replay_files, replay_runner, &result_dir, cancel);
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
    if (parsed->fresh_rel_l2.has_value()) result.set_fresh_rel_l2(*parsed->fresh_rel_l2);
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
  result.set_message(core::BoundedText(result.message(), kMaxMessageBytes));
  result.set_device(backend_->device());
  result.set_device_seconds(outcome->wall_seconds);
  result.set_worker(options_.worker_name);
  result.set_backend_version(backend_->version());
  return result;
}

}  // namespace accelopt::profiler

#include "libs/sandbox/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/sandbox/bounded_output.h"

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr size_t kOutputHeadBytes = 32 << 10;
constexpr size_t kOutputTailBytes = 32 << 10;
constexpr size_t kMaxPassedFds = 16;

std::string Bytes(int mib) { return absl::StrCat(static_cast<int64_t>(mib) << 20); }

std::vector<std::string> BwrapArgv(const SandboxSpec& spec, const std::string& bwrap,
                                   const std::vector<std::string>& inputs) {
  std::vector<std::string> a = {bwrap,
                                "--unshare-all",  // network, pid, ipc, uts, cgroup, user
                                "--die-with-parent",
                                "--new-session",
                                "--ro-bind",
                                "/usr",
                                "/usr",
                                "--symlink",
                                "usr/lib",
                                "/lib",
                                "--symlink",
                                "usr/lib64",
                                "/lib64",
                                "--symlink",
                                "usr/bin",
                                "/bin",
                                "--symlink",
                                "usr/sbin",
                                "/sbin",
                                "--ro-bind-try",
                                "/etc/alternatives",
                                "/etc/alternatives",
                                "--ro-bind-try",
                                "/etc/ld.so.cache",
                                "/etc/ld.so.cache",
                                "--proc",
                                "/proc",
                                "--dev",
                                "/dev",
                                "--size",
                                Bytes(spec.limits.tmp_mb),
                                "--tmpfs",
                                "/tmp"};
  if (spec.output_files.empty()) {
    a.insert(a.end(), {"--bind", spec.scratch_dir, "/scratch"});
  } else {
    a.insert(a.end(), {"--size", Bytes(spec.limits.scratch_mb), "--tmpfs", "/scratch"});
    for (const auto& name : inputs) {
      a.insert(a.end(), {"--ro-bind", spec.scratch_dir + "/" + name, "/scratch/" + name});
    }
    for (const auto& name : spec.output_files) {
      a.insert(a.end(), {"--bind", spec.scratch_dir + "/" + name, "/scratch/" + name});
    }
  }
  for (const auto& device : spec.device_binds) a.insert(a.end(), {"--dev-bind-try", device, device});
  for (const auto& [host, inside] : spec.read_only_binds) a.insert(a.end(), {"--ro-bind", host, inside});
  // The sandbox root itself (a tmpfs holding the mount points) becomes read-only too.
  a.insert(a.end(), {"--remount-ro", "/", "--chdir", "/scratch", "--clearenv"});
  for (const auto& [k, v] : spec.env) a.insert(a.end(), {"--setenv", k, v});
  a.push_back("--");
  a.insert(a.end(), spec.argv.begin(), spec.argv.end());
  return a;
}

// `name` itself when it holds a slash, else its first match in the worker's PATH.
absl::StatusOr<std::string> FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (access(name.c_str(), X_OK) == 0) return name;
  } else {
    const char* path = std::getenv("PATH");
    for (absl::string_view dir : absl::StrSplit(path == nullptr ? "/usr/bin:/bin" : path, ':')) {
      std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return absl::UnavailableError(absl::StrCat("bubblewrap '", name, "' not found"));
}

// Files of the scratch directory at start (the program's inputs), by name.
std::vector<std::string> RegularFiles(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) names.push_back(entry.path().filename().string());
  }
  return names;
}

// Creates the output files empty (writable by the sandbox user) before the run.
absl::Status CreateOutputFiles(const SandboxSpec& spec, bool drop_privileges) {
  for (const auto& name : spec.output_files) {
    const std::string path = spec.scratch_dir + "/" + name;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
    bool handed = !drop_privileges || fchown(fd, spec.sandbox_uid, spec.sandbox_uid) == 0;
    close(fd);
    if (!handed) return absl::UnavailableError(absl::StrCat("cannot hand ", path, " to the sandbox user"));
  }
  return absl::OkStatus();
}

void RemoveEmptyOutputFiles(const SandboxSpec& spec) {
  for (const auto& name : spec.output_files) {
    const std::string path = spec.scratch_dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && st.st_size == 0) unlink(path.c_str());
  }
}

// The sandboxed program's process (in the reaper), for the SIGTERM handler.
volatile pid_t g_program = 0;

void KillProgram(int) {
  if (g_program > 0) {
    kill(-g_program, SIGKILL);
    kill(g_program, SIGKILL);
  }
}

void SetLimit(int resource, rlim_t value) {
  rlimit limit{value, value};
  setrlimit(resource, &limit);
}

struct ReaperArgs {
  char* const* argv;
  char* const* envp;
  int out_fd;
  rlim_t cpu_seconds;
  rlim_t address_space_bytes;
  rlim_t file_size_bytes;
  bool drop_privileges;
};

// Runs in the forked child: only async-signal-safe calls. This process is a reaper: it starts the program as
// its own child, becomes the subreaper of everything below, and waits until every descendant has exited, so
// that bubblewrap's namespace init (which outlives the bubblewrap process that started it) never lingers as a
// zombie counting against the sandbox user's process limit. SIGTERM makes it kill the program's process group.
// It exits with the program's exit code, or 128 + the signal that killed it.
[[noreturn]] void RunReaper(const SandboxSpec& spec, const ReaperArgs& r) {
  setsid();
  struct sigaction term {};
  term.sa_handler = KillProgram;
  sigaction(SIGTERM, &term, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = open("/dev/null", O_RDONLY);
  dup2(devnull, 0);
  dup2(r.out_fd, 1);
  dup2(r.out_fd, 2);
  // The passed descriptors become 3, 4, ... (moved above that range first, so none overwrites another); every
  // other descriptor is closed, also those of other sandboxes that concurrent threads of the worker hold.
  const int passed = static_cast<int>(spec.pass_fds.size());
  int moved[kMaxPassedFds];
  for (int i = 0; i < passed; ++i) {
    moved[i] = fcntl(spec.pass_fds[i], F_DUPFD, 3 + passed);
    if (moved[i] < 0) _exit(126);
  }
  for (int i = 0; i < passed; ++i) {
    if (dup2(moved[i], 3 + i) < 0) _exit(126);
  }
  if (close_range(3 + passed, ~0U, 0) != 0) {  // (kernels before 5.9)
    rlimit open_files{};
    getrlimit(RLIMIT_NOFILE, &open_files);
    const rlim_t last = std::min<rlim_t>(open_files.rlim_cur, 1 << 16);
    for (rlim_t fd = 3 + passed; fd < last; ++fd) close(static_cast<int>(fd));
  }
  rlimit cpu{r.cpu_seconds, r.cpu_seconds + 5};
  setrlimit(RLIMIT_CPU, &cpu);
  SetLimit(RLIMIT_AS, r.address_space_bytes);
  SetLimit(RLIMIT_FSIZE, r.file_size_bytes);
  SetLimit(RLIMIT_CORE, 0);
  setpriority(PRIO_PROCESS, 0, spec.limits.nice);
  sched_param batch{};
  sched_setscheduler(0, SCHED_BATCH, &batch);
  if (r.drop_privileges) {
    SetLimit(RLIMIT_NPROC, static_cast<rlim_t>(spec.limits.max_processes));
    gid_t gid = static_cast<gid_t>(spec.sandbox_uid);
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(spec.sandbox_uid) != 0) _exit(126);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t program = fork();
  if (program < 0) _exit(125);
  if (program == 0) {
    setpgid(0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTERM, &dfl, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!spec.use_bwrap && chdir(spec.scratch_dir.c_str()) != 0) _exit(126);
    // execve, never execvp: bubblewrap (and so the sandbox's pid 1, whose /proc/1/environ the program can
    // read) gets the clean environment only.
    execve(r.argv[0], r.argv, r.envp);
    _exit(127);
  }
  g_program = program;
  int code = 125;
  while (true) {
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: every descendant has been reaped
    }
    if (done == program) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      kill(-program, SIGKILL);  // whatever the program left behind in its process group
    }
  }
  _exit(code);
}

// Reads what is available (at most `max_reads` chunks, so a flood cannot starve the deadline check).
void Drain(int fd, BoundedOutput* output, int max_reads) {
  char buffer[16 << 10];
  for (int i = 0; i < max_reads; ++i) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      output->Append(absl::string_view(buffer, static_cast<size_t>(n)));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;  // EOF or EAGAIN
    }
  }
}

}  // namespace

absl::StatusOr<SandboxOutcome> RunInSandbox(const SandboxSpec& spec, const std::atomic<bool>* cancel) {
  // The passed descriptors belong to this call from here on: closed on every return path.
  const std::vector<int> passed_fds = spec.pass_fds;
  absl::Cleanup close_passed = [passed_fds] {
    for (int fd : passed_fds) close(fd);
  };
  if (spec.pass_fds.size() > kMaxPassedFds) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxPassedFds, " descriptors can be passed"));
  }
  struct stat st;
  if (stat(spec.scratch_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("scratch directory ", spec.scratch_dir, " does not exist"));
  }
  const bool scratch_in_memory = spec.use_bwrap && !spec.output_files.empty();
  const int tmpfs_mb = (spec.use_bwrap ? spec.limits.tmp_mb : 0) + (scratch_in_memory ? spec.limits.scratch_mb : 0);
  if (spec.limits.tmp_mb < 1 || spec.limits.scratch_mb < 1 || tmpfs_mb >= spec.limits.memory_mb) {
    return absl::InvalidArgumentError(absl::StrCat("sandbox tmpfs sizes (", tmpfs_mb,
                                                   " MiB) leave nothing of the memory limit (", spec.limits.memory_mb,
                                                   " MiB) for the program"));
  }
  const bool drop_privileges = geteuid() == 0;
  if (drop_privileges) {
    // The unprivileged sandbox user must be able to write its scratch directory.
    if (chown(spec.scratch_dir.c_str(), spec.sandbox_uid, spec.sandbox_uid) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot hand ", spec.scratch_dir, " to the sandbox user"));
    }
  }
  std::vector<std::string> argv_strings = spec.argv;
  if (spec.use_bwrap) {
    auto bwrap = FindExecutable(spec.bwrap);
    if (!bwrap.ok()) return bwrap.status();
    std::vector<std::string> inputs = RegularFiles(spec.scratch_dir);
    if (auto s = CreateOutputFiles(spec, drop_privileges); !s.ok()) return s;
    argv_strings = BwrapArgv(spec, *bwrap, inputs);
  }
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  // Output comes through a pipe: the worker keeps its head and tail, so no amount of output fills a disk.
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return absl::UnavailableError("cannot create the sandbox output pipe");
  const double cpu_budget = std::ceil(absl::ToDoubleSeconds(spec.timeout) * spec.limits.cpu_cores);
  ReaperArgs reaper{argv.data(),
                    envp.data(),
                    pipe_fds[1],
                    static_cast<rlim_t>(std::max(1.0, std::min<double>(spec.limits.cpu_seconds, cpu_budget))),
                    static_cast<rlim_t>(spec.limits.memory_mb - tmpfs_mb) << 20,
                    static_cast<rlim_t>(spec.limits.scratch_mb) << 20,
                    drop_privileges};

  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) RunReaper(spec, reaper);
  std::move(close_passed).Invoke();
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    return absl::UnavailableError(absl::StrCat("fork failed: ", std::strerror(errno)));
  }
  const int out = pipe_fds[0];
  fcntl(out, F_SETFL, O_NONBLOCK);
  BoundedOutput output(kOutputHeadBytes, kOutputTailBytes);

  SandboxOutcome outcome;
  auto deadline = start + std::chrono::microseconds(absl::ToInt64Microseconds(spec.timeout));
  int status = 0;
  bool killed_for_deadline = false, killed_for_cancel = false;
  std::chrono::steady_clock::time_point hard_kill_at;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    auto now = std::chrono::steady_clock::now();
    if (!killed_for_deadline && !killed_for_cancel) {
      if (cancel != nullptr && cancel->load()) {
        killed_for_cancel = true;
      } else if (now >= deadline) {
        killed_for_deadline = true;
      }
      if (killed_for_cancel || killed_for_deadline) {
        // The reaper kills the program's process group; bwrap's --die-with-parent takes the sandbox's pid
        // namespace (its whole process tree) with it, and the reaper exits once all of it is reaped.
        kill(pid, SIGTERM);
        hard_kill_at = now + std::chrono::seconds(2);
      }
    } else if (now >= hard_kill_at) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
    pollfd readable{out, POLLIN, 0};
    if (poll(&readable, 1, 5) > 0) Drain(out, &output, 64);
  }
  Drain(out, &output, std::numeric_limits<int>::max());
  close(out);
  outcome.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.output = output.Text();
  if (scratch_in_memory) RemoveEmptyOutputFiles(spec);

  if (killed_for_cancel) {
    outcome.ending = SandboxOutcome::Ending::kCancelled;
  } else if (killed_for_deadline) {
    outcome.ending = SandboxOutcome::Ending::kTimedOut;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) > 128) {
    // The reaper (and bwrap) report a program killed by a signal as 128 + the signal number.
    outcome.ending = SandboxOutcome::Ending::kSignaled;
    outcome.signal = WEXITSTATUS(status) - 128;
  } else if (WIFEXITED(status)) {
    outcome.ending = SandboxOutcome::Ending::kExited;
    outcome.exit_code = WEXITSTATUS(status);
  } else {
    outcome.ending = SandboxOutcome::Ending::kSignaled;
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace accelopt::sandbox

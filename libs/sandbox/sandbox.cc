#include "libs/sandbox/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "libs/core/file.h"

namespace accelopt::sandbox {
namespace {

constexpr size_t kMaxOutputBytes = 64 << 10;

std::vector<std::string> BwrapArgv(const SandboxSpec& spec) {
  std::vector<std::string> a = {spec.bwrap,
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
                                "--tmpfs",
                                "/tmp",
                                "--bind",
                                spec.scratch_dir,
                                "/scratch"};
  for (const auto& device : spec.device_binds) a.insert(a.end(), {"--dev-bind-try", device, device});
  for (const auto& [host, inside] : spec.read_only_binds) {
    a.insert(a.end(), {"--ro-bind", host, inside});
  }
  // The sandbox root itself (a tmpfs holding the mount points) becomes read-only too.
  a.insert(a.end(), {"--remount-ro", "/", "--chdir", "/scratch", "--clearenv"});
  for (const auto& [k, v] : spec.env) a.insert(a.end(), {"--setenv", k, v});
  a.push_back("--");
  a.insert(a.end(), spec.argv.begin(), spec.argv.end());
  return a;
}

// The sandboxed program's process (in the reaper), for the SIGTERM handler.
volatile pid_t g_program = 0;

void KillProgram(int) {
  if (g_program > 0) {
    kill(-g_program, SIGKILL);
    kill(g_program, SIGKILL);
  }
}

// Runs in the forked child: only async-signal-safe calls. This process is a reaper: it starts the program as
// its own child, becomes the subreaper of everything below, and waits until every descendant has exited, so
// that bubblewrap's namespace init (which outlives the bubblewrap process that started it) never lingers as a
// zombie counting against the sandbox user's process limit. SIGTERM makes it kill the program's process group.
// It exits with the program's exit code, or 128 + the signal that killed it.
[[noreturn]] void RunReaper(const SandboxSpec& spec, char* const* argv, char* const* envp, int out_fd,
                            bool drop_privileges) {
  setsid();
  struct sigaction term {};
  term.sa_handler = KillProgram;
  sigaction(SIGTERM, &term, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = open("/dev/null", O_RDONLY);
  dup2(devnull, 0);
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  rlimit cpu{static_cast<rlim_t>(spec.limits.cpu_seconds), static_cast<rlim_t>(spec.limits.cpu_seconds + 5)};
  setrlimit(RLIMIT_CPU, &cpu);
  rlim_t bytes = static_cast<rlim_t>(spec.limits.memory_mb) << 20;
  rlimit as{bytes, bytes};
  setrlimit(RLIMIT_AS, &as);
  rlimit core{0, 0};
  setrlimit(RLIMIT_CORE, &core);
  if (drop_privileges) {
    rlimit nproc{static_cast<rlim_t>(spec.limits.max_processes), static_cast<rlim_t>(spec.limits.max_processes)};
    setrlimit(RLIMIT_NPROC, &nproc);
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
    if (spec.use_bwrap) {
      execvp(argv[0], argv);
    } else {
      if (chdir(spec.scratch_dir.c_str()) != 0) _exit(126);
      execve(argv[0], argv, envp);
    }
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

}  // namespace

absl::StatusOr<SandboxOutcome> RunInSandbox(const SandboxSpec& spec, const std::atomic<bool>* cancel) {
  struct stat st;
  if (stat(spec.scratch_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("scratch directory ", spec.scratch_dir, " does not exist"));
  }
  const bool drop_privileges = geteuid() == 0;
  if (drop_privileges) {
    // The unprivileged sandbox user must be able to write its scratch directory.
    if (chown(spec.scratch_dir.c_str(), spec.sandbox_uid, spec.sandbox_uid) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot hand ", spec.scratch_dir, " to the sandbox user"));
    }
  }
  std::vector<std::string> argv_strings = spec.use_bwrap ? BwrapArgv(spec) : spec.argv;
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  // Output goes to a file outside the scratch directory, so the sandboxed program cannot tamper with it.
  char out_template[] = "/tmp/accelopt-sandbox-out-XXXXXX";
  int out_fd = mkstemp(out_template);
  if (out_fd < 0) return absl::UnavailableError("cannot create the sandbox output file");
  unlink(out_template);  // the fd keeps it alive

  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    close(out_fd);
    return absl::UnavailableError(absl::StrCat("fork failed: ", std::strerror(errno)));
  }
  if (pid == 0) RunReaper(spec, argv.data(), envp.data(), out_fd, drop_privileges);

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
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  outcome.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  off_t size = lseek(out_fd, 0, SEEK_END);
  off_t from = size > static_cast<off_t>(kMaxOutputBytes) ? size - kMaxOutputBytes : 0;
  outcome.output.resize(static_cast<size_t>(size - from));
  if (pread(out_fd, outcome.output.data(), outcome.output.size(), from) < 0) outcome.output.clear();
  close(out_fd);

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

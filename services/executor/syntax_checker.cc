#include "services/executor/syntax_checker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace accelopt::executor {
namespace {

// Prints "<line>\t<message>" and exits 3 when stdin does not parse.
constexpr char kScript[] =
    "import ast, sys\n"
    "src = sys.stdin.buffer.read().decode('utf-8', 'replace')\n"
    "try:\n"
    "    ast.parse(src)\n"
    "except SyntaxError as e:\n"
    "    sys.stdout.write('%d\\t%s' % (e.lineno or 0, e.msg)); sys.exit(3)\n"
    "except (ValueError, MemoryError, RecursionError) as e:\n"
    "    sys.stdout.write('0\\t%s' % e); sys.exit(3)\n";

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

}  // namespace

absl::Status PythonSyntaxChecker::Check(absl::string_view source) const {
  int in_pair[2], out_pipe[2];
  // A socket for stdin so that writing after the child died gives EPIPE (MSG_NOSIGNAL), not SIGPIPE.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) {
    return absl::UnavailableError(absl::StrCat("syntax check: socketpair: ", std::strerror(errno)));
  }
  Fd in_parent(in_pair[0]), in_child(in_pair[1]);
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("syntax check: pipe: ", std::strerror(errno)));
  }
  Fd out_parent(out_pipe[0]), out_child(out_pipe[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_child.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_child.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, out_child.get(), 2);
  std::string script = kScript;
  char* argv[] = {const_cast<char*>(python_.c_str()), const_cast<char*>("-I"), const_cast<char*>("-c"), script.data(),
                  nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, python_.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return absl::UnavailableError(absl::StrCat("syntax check: cannot run ", python_, ": ", std::strerror(rc)));
  in_child.Close();
  out_child.Close();
  fcntl(in_parent.get(), F_SETFL, O_NONBLOCK);

  absl::Time deadline = absl::Now() + timeout_;
  size_t written = 0;
  std::string output;
  bool timed_out = false;
  if (source.empty()) shutdown(in_parent.get(), SHUT_WR);
  for (;;) {
    pollfd fds[2] = {{out_parent.get(), POLLIN, 0}, {in_parent.get(), POLLOUT, 0}};
    int nfds = written < source.size() ? 2 : 1;
    int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (wait_ms <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, nfds, wait_ms) < 0 && errno != EINTR) break;
    if (nfds == 2 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = send(in_parent.get(), source.data() + written, source.size() - written, MSG_NOSIGNAL);
      if (n > 0) written += n;
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = source.size();  // child gone; read its output
      if (written == source.size()) shutdown(in_parent.get(), SHUT_WR);
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[4096];
      ssize_t n = read(out_parent.get(), buffer, sizeof(buffer));
      if (n > 0) output.append(buffer, n);
      if (n == 0) break;  // EOF: the child is done
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::UnavailableError(absl::StrCat("syntax check timed out after ", absl::FormatDuration(timeout_)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    size_t tab = output.find('\t');
    int line = 0;
    if (tab != std::string::npos && absl::SimpleAtoi(output.substr(0, tab), &line)) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", output.substr(tab + 1)));
    }
  }
  return absl::UnavailableError(absl::StrCat("syntax check failed (status ", status, "): ", output.substr(0, 300)));
}

}  // namespace accelopt::executor

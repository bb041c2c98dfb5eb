#include "libs/testing/child_process.h"

#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "libs/core/file.h"
#include "libs/testing/wait_until.h"

namespace accelopt::testing {

absl::StatusOr<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv, const std::string& log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", log_path));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fd);
  return ChildProcess(pid, log_path);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), log_path_(std::move(other.log_path_)), reaped_(other.reaped_) {
  other.reaped_ = true;
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void ChildProcess::Signal(int sig) const { kill(pid_, sig); }

std::optional<int> ChildProcess::WaitForExit(std::chrono::milliseconds timeout) {
  std::optional<int> exit_status;
  WaitUntil(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        reaped_ = true;
        exit_status = status;
        return true;
      },
      timeout)
      .IgnoreError();  // no exit status is the timeout
  return exit_status;
}

std::string ChildProcess::Output() const {
  auto text = core::ReadFile(log_path_);
  return text.ok() ? *text : "";
}

int PickFreePort() {
  // Below the kernel's ephemeral range (32768+): outgoing connections of concurrently running tests take
  // ephemeral ports, so a port the kernel picked with bind(0) could be gone by the time a service binds it.
  // Also below the CLI test's base ports (20000+). Random, so concurrent test processes rarely collide.
  // Never the same port twice in one process: a test picks all its ports before any service binds them, so a
  // port returned earlier still looks free (a cluster of 14 ports drew a duplicate about once in a hundred runs).
  static absl::Mutex mu(absl::kConstInit);
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  static std::set<int>* handed_out = new std::set<int>();
  absl::MutexLock lock(&mu);
  std::uniform_int_distribution<int> range(10000, 19999);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = range(rng);
    if (handed_out->count(port) > 0) continue;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (free) {
      handed_out->insert(port);
      return port;
    }
  }
  return 0;
}

absl::Status WaitForServing(const std::string& address, std::chrono::milliseconds timeout) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  const auto deadline = std::chrono::system_clock::now() + timeout;
  bool serving = false;
  absl::Status waited = WaitUntil(
      [&] {
        grpc::ClientContext ctx;
        ctx.set_deadline(deadline);
        ctx.set_wait_for_ready(true);
        grpc::health::v1::HealthCheckResponse resp;
        grpc::Status s = stub->Check(&ctx, grpc::health::v1::HealthCheckRequest(), &resp);
        serving = s.ok() && resp.status() == grpc::health::v1::HealthCheckResponse::SERVING;
        return serving || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
      },
      timeout);
  if (waited.ok() && serving) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(address, " did not become SERVING"));
}

}  // namespace accelopt::testing

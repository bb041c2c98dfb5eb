#include "libs/testing/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace accelopt::testing {
namespace {

int ConnectTo(const std::string& host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// Copies what is readable on `from` to `to`; false when `from` is closed or either side failed.
bool CopyOnce(int from, int to) {
  char buffer[16384];
  ssize_t n = read(from, buffer, sizeof(buffer));
  if (n <= 0) return false;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = write(to, buffer + off, static_cast<size_t>(n - off));
    if (w <= 0) return false;
    off += w;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(const std::string& backend, uint64_t seed) {
  const size_t colon = backend.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(backend.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(absl::StrCat("backend '", backend, "' is not host:port"));
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string error = std::strerror(errno);
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen on loopback: ", error));
  }
  std::string address = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  return std::unique_ptr<FaultProxy>(new FaultProxy(fd, address, backend.substr(0, colon), port, seed));
}

FaultProxy::FaultProxy(int listen_fd, std::string address, std::string backend_host, int backend_port, uint64_t seed)
    : listen_fd_(listen_fd),
      address_(std::move(address)),
      backend_host_(std::move(backend_host)),
      backend_port_(backend_port),
      random_(seed) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FaultProxy::~FaultProxy() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  CutOpenConnections();
  std::vector<std::thread> pumps;
  {
    absl::MutexLock lock(&mu_);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) t.join();
}

void FaultProxy::SetDropFraction(double fraction) {
  absl::MutexLock lock(&mu_);
  drop_fraction_ = fraction;
}

void FaultProxy::CutOpenConnections() {
  absl::MutexLock lock(&mu_);
  // shutdown() wakes the pump's poll(); the pump closes the descriptors.
  for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
}

void FaultProxy::AcceptLoop() {
  while (!stopping_) {
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (stopping_) return;
      continue;
    }
    ++accepted_;
    bool drop;
    {
      absl::MutexLock lock(&mu_);
      drop = std::uniform_real_distribution<double>(0, 1)(random_) < drop_fraction_;
    }
    if (drop) {
      ++dropped_;
      close(client);
      continue;
    }
    absl::MutexLock lock(&mu_);
    pumps_.emplace_back([this, client] { Pump(client); });
  }
}

void FaultProxy::Pump(int client) {
  int backend = ConnectTo(backend_host_, backend_port_);
  if (backend < 0) {
    close(client);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    open_fds_.push_back(client);
    open_fds_.push_back(backend);
  }
  pollfd fds[2] = {{client, POLLIN, 0}, {backend, POLLIN, 0}};
  while (!stopping_) {
    if (poll(fds, 2, 200) < 0 && errno != EINTR) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !CopyOnce(client, backend)) break;
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) && !CopyOnce(backend, client)) break;
  }
  {
    absl::MutexLock lock(&mu_);
    open_fds_.erase(
        std::remove_if(open_fds_.begin(), open_fds_.end(), [&](int fd) { return fd == client || fd == backend; }),
        open_fds_.end());
  }
  close(client);
  close(backend);
}

}  // namespace accelopt::testing

#include "libs/testing/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace accelopt::testing {
namespace {

constexpr int kFirstPort = 20000;
constexpr int kRangeStride = 150;
constexpr int kCandidates = 80;  // 20000 + 79 * 150 + span stays below 32768 for spans up to 900

bool CanBind(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool bound = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return bound;
}

}  // namespace

int FreePortRange(int span, int attempt) {
  const int first = static_cast<int>((getpid() + attempt * 67) % kCandidates);
  for (int k = 0; k < kCandidates; ++k) {
    const int base = kFirstPort + ((first + k) % kCandidates) * kRangeStride;
    bool free = true;
    for (int port = base; port < base + span && free; ++port) free = CanBind(port);
    if (free) return base;
  }
  return kFirstPort + first * kRangeStride;  // none free: the caller's start-up fails and names the port
}

}  // namespace accelopt::testing

#include "cli/listening_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace accelopt::cli {
namespace {

// A socket of this process bound to an ephemeral loopback port; listening when asked.
struct BoundSocket {
  explicit BoundSocket(bool listening) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t size = sizeof(address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
    port = ntohs(address.sin_port);
    if (listening) {
      EXPECT_EQ(listen(fd, 1), 0);
    }
  }
  ~BoundSocket() { close(fd); }
  int fd = -1;
  int port = 0;
};

TEST(ListeningPortTest, AListeningSocketIsFoundInItsOwnerOnly) {
  int port = 0;
  {
    BoundSocket server(/*listening=*/true);
    port = server.port;
    EXPECT_FALSE(PortIsFree(port));
    EXPECT_TRUE(ProcessListensOn(getpid(), port));
    EXPECT_FALSE(ProcessListensOn(getppid(), port));
    EXPECT_FALSE(ProcessListensOn(getpid(), port == 65535 ? port - 1 : port + 1));
  }
  EXPECT_TRUE(PortIsFree(port));
  EXPECT_FALSE(ProcessListensOn(getpid(), port));
}

TEST(ListeningPortTest, ABoundButNotListeningSocketTakesThePortButServesNothing) {
  BoundSocket bound(/*listening=*/false);
  EXPECT_FALSE(PortIsFree(bound.port));
  EXPECT_FALSE(ProcessListensOn(getpid(), bound.port));
}

}  // namespace
}  // namespace accelopt::cli

#include "libs/testing/fault_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

namespace accelopt::testing {
namespace {

// A one-connection-at-a-time echo server on a free loopback port.
class EchoServer {
 public:
  EchoServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    address_ = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
    thread_ = std::thread([this] {
      while (true) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buffer[256];
        ssize_t n;
        while ((n = read(c, buffer, sizeof(buffer))) > 0) (void)!write(c, buffer, static_cast<size_t>(n));
        close(c);
      }
    });
  }
  ~EchoServer() {
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  const std::string& address() const { return address_; }

 private:
  int fd_;
  std::string address_;
  std::thread thread_;
};

// Connects to `address`, sends `text`, returns what came back ("" when the connection was dropped).
std::string RoundTrip(const std::string& address, const std::string& text) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string got;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size())) {
    char buffer[256];
    while (got.size() < text.size()) {
      ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n <= 0) break;
      got.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  return got;
}

TEST(FaultProxyTest, ForwardsEveryConnectionWhenNothingIsDropped) {
  EchoServer echo;
  auto proxy = FaultProxy::Start(echo.address(), 1);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(RoundTrip((*proxy)->address(), "hello" + std::to_string(i)), "hello" + std::to_string(i));
  EXPECT_EQ((*proxy)->accepted(), 5);
  EXPECT_EQ((*proxy)->dropped(), 0);
}

TEST(FaultProxyTest, DropsTheChosenFractionReproduciblyFromTheSeed) {
  EchoServer echo;
  std::vector<std::vector<bool>> runs;
  for (int run = 0; run < 2; ++run) {
    auto proxy = FaultProxy::Start(echo.address(), 42);
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    (*proxy)->SetDropFraction(0.5);
    std::vector<bool> delivered;
    for (int i = 0; i < 40; ++i) delivered.push_back(RoundTrip((*proxy)->address(), "ping") == "ping");
    const int64_t forwarded = std::count(delivered.begin(), delivered.end(), true);
    EXPECT_EQ((*proxy)->dropped(), 40 - forwarded);
    EXPECT_GT((*proxy)->dropped(), 5);
    EXPECT_GT(forwarded, 5);
    runs.push_back(delivered);
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST(FaultProxyTest, DroppingEverythingDeliversNothing) {
  EchoServer echo;
  auto proxy = FaultProxy::Start(echo.address(), 3);
  ASSERT_TRUE(proxy.ok());
  (*proxy)->SetDropFraction(1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(RoundTrip((*proxy)->address(), "x"), "");
  EXPECT_EQ((*proxy)->dropped(), 5);
}

}  // namespace
}  // namespace accelopt::testing

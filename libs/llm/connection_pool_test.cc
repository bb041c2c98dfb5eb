#include "libs/llm/connection_pool.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace accelopt::llm {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Connections to a loopback listener; the accepted ends stay here so the test can close them.
class ConnectionPoolTest : public ::testing::Test {
 protected:
  std::unique_ptr<PooledConnection> Connect() {
    auto connection = std::make_unique<PooledConnection>();
    connection->plain = std::make_unique<boost::beast::tcp_stream>(io_);
    connection->plain->connect(acceptor_.local_endpoint());
    server_ends_.push_back(acceptor_.accept());
    return connection;
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  ConnectionPool pool_{absl::Seconds(30), 2, [this] { return now_; }};
  asio::io_context io_;
  tcp::acceptor acceptor_{io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::vector<tcp::socket> server_ends_;
};

TEST_F(ConnectionPoolTest, HandsBackTheMostRecentlyUsedOpenConnectionPerOrigin) {
  std::unique_ptr<PooledConnection> first = Connect();
  std::unique_ptr<PooledConnection> second = Connect();
  PooledConnection* second_ptr = second.get();
  pool_.Put("http://a:1", std::move(first));
  now_ += absl::Seconds(1);
  pool_.Put("http://a:1", std::move(second));
  EXPECT_EQ(pool_.Take("http://b:1"), nullptr);
  EXPECT_EQ(pool_.Take("http://a:1").get(), second_ptr);
  EXPECT_NE(pool_.Take("http://a:1"), nullptr);
  EXPECT_EQ(pool_.Take("http://a:1"), nullptr);
}

TEST_F(ConnectionPoolTest, ConnectionsIdleLongerThanTheTimeoutAreClosedNotHandedOut) {
  pool_.Put("http://a:1", Connect());
  now_ += absl::Seconds(30);
  EXPECT_EQ(pool_.Take("http://a:1"), nullptr);
  EXPECT_EQ(pool_.idle_count(), 0u);
}

TEST_F(ConnectionPoolTest, AConnectionThePeerClosedOrWroteToIsSkipped) {
  pool_.Put("http://a:1", Connect());
  pool_.Put("http://a:1", Connect());
  server_ends_[1].close();  // the most recent one: the server's keep-alive timeout fired
  std::unique_ptr<PooledConnection> taken = pool_.Take("http://a:1");
  ASSERT_NE(taken, nullptr);
  EXPECT_TRUE(IdleSocketIsOpen(taken->tcp()));

  pool_.Put("http://a:1", std::move(taken));
  asio::write(server_ends_[0], asio::buffer(std::string("HTTP/1.1 408 Request Timeout\r\n\r\n")));  // unasked for
  EXPECT_EQ(pool_.Take("http://a:1"), nullptr);
}

TEST_F(ConnectionPoolTest, KeepsAtMostTheCapPerOriginDroppingTheOldest) {
  pool_.Put("http://a:1", Connect());
  pool_.Put("http://a:1", Connect());
  pool_.Put("http://a:1", Connect());
  pool_.Put("http://b:1", Connect());
  EXPECT_EQ(pool_.idle_count(), 3u);
  pool_.Clear();
  EXPECT_EQ(pool_.idle_count(), 0u);
}

}  // namespace
}  // namespace accelopt::llm

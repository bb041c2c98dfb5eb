#include "libs/core/http_url.h"

#include <gtest/gtest.h>

namespace accelopt::core {
namespace {

TEST(UrlTest, SplitsSchemeHostPortAndPath) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl("HTTPS://API.Example.com/v1/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "api.example.com");
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->path, "/v1");
  EXPECT_EQ(url->Redacted(), "https://api.example.com:443/v1");
}

TEST(UrlTest, ReadsIpv6PortsAndUserinfoWithoutLeakingIt) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl("http://user:secret@[::1]:8080");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->path, "");
  EXPECT_EQ(url->userinfo, "user:secret");
  EXPECT_EQ(url->HostPort(), "[::1]:8080");
  EXPECT_EQ(url->Redacted().find("secret"), std::string::npos);
}

TEST(UrlTest, RejectsWhatItCannotUse) {
  EXPECT_FALSE(ParseHttpUrl("localhost:8000/v1").ok());
  EXPECT_FALSE(ParseHttpUrl("ftp://host/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://:80/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://host:99999/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://host/v1?x=1").ok());
}

TEST(UrlTest, ProxyUrlsDefaultToHttp) {
  absl::StatusOr<HttpUrl> url = ParseProxyUrl("proxy.corp:3128");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->port, 3128);
}

}  // namespace
}  // namespace accelopt::core

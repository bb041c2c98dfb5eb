#include "libs/llm/proxy.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

core::HttpUrl Url(const std::string& text) { return *core::ParseHttpUrl(text); }

TEST(NoProxyTest, MatchesHostsAndSubdomainsButNotLookalikes) {
  std::vector<std::string> entries = ParseNoProxy(" .corp.example , internal ,Other.COM");
  EXPECT_TRUE(NoProxyMatches(entries, Url("https://corp.example/")));
  EXPECT_TRUE(NoProxyMatches(entries, Url("https://llm.corp.example/")));
  EXPECT_TRUE(NoProxyMatches(entries, Url("http://internal:8000/")));
  EXPECT_TRUE(NoProxyMatches(entries, Url("http://api.other.com/")));
  EXPECT_FALSE(NoProxyMatches(entries, Url("https://notcorp.example/")));
  EXPECT_FALSE(NoProxyMatches(entries, Url("https://internal.example/")));
}

TEST(NoProxyTest, MatchesPortsIpsCidrsAndWildcard) {
  EXPECT_TRUE(NoProxyMatches(ParseNoProxy("vllm:8000"), Url("http://vllm:8000/v1")));
  EXPECT_FALSE(NoProxyMatches(ParseNoProxy("vllm:8000"), Url("http://vllm:9000/v1")));
  EXPECT_TRUE(NoProxyMatches(ParseNoProxy("10.1.2.3"), Url("http://10.1.2.3/")));
  EXPECT_TRUE(NoProxyMatches(ParseNoProxy("10.0.0.0/8"), Url("http://10.200.0.7/")));
  EXPECT_FALSE(NoProxyMatches(ParseNoProxy("10.0.0.0/8"), Url("http://11.0.0.1/")));
  EXPECT_TRUE(NoProxyMatches(ParseNoProxy("fd00::/8"), Url("http://[fd12::1]/")));
  EXPECT_TRUE(NoProxyMatches(ParseNoProxy("[::1]:8000"), Url("http://[::1]:8000/")));
  EXPECT_TRUE(NoProxyMatches(ParseNoProxy("*"), Url("https://anything.example/")));
}

TEST(ProxyConfigTest, PicksTheProxyByScheme) {
  ProxyConfig config;
  config.http_proxy = *core::ParseProxyUrl("http://plain-proxy:3128");
  config.https_proxy = *core::ParseProxyUrl("tls-proxy:3129");
  config.no_proxy = ParseNoProxy("internal.example");
  EXPECT_EQ(config.ProxyFor(Url("http://api.example/"))->host, "plain-proxy");
  EXPECT_EQ(config.ProxyFor(Url("https://api.example/"))->host, "tls-proxy");
  EXPECT_FALSE(config.ProxyFor(Url("https://internal.example/")).has_value());
}

TEST(ProxyConfigTest, LoopbackIsNeverProxied) {
  ProxyConfig config;
  config.https_proxy = *core::ParseProxyUrl("proxy:3128");
  config.http_proxy = *core::ParseProxyUrl("proxy:3128");
  for (const char* url : {"http://localhost:8000/v1", "http://127.0.0.1:8000/v1", "https://127.8.9.1/",
                          "http://[::1]:8000/", "http://model.localhost/"}) {
    EXPECT_FALSE(config.ProxyFor(Url(url)).has_value()) << url;
  }
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("localhost.example"));
}

}  // namespace
}  // namespace accelopt::llm

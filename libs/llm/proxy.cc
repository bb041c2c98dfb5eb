#include "libs/llm/proxy.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace accelopt::llm {
namespace {

namespace ip = boost::asio::ip;

// The value of the lower-case variable if set and non-empty, else the upper-case one.
std::string GetProxyVariable(const char* lower, const char* upper, const char** used) {
  for (const char* name : {lower, upper}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      *used = name;
      return value;
    }
  }
  return "";
}

std::optional<ip::address> ParseIp(absl::string_view text) {
  boost::system::error_code ec;
  ip::address address = ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  return address;
}

bool CidrContains(absl::string_view cidr, const ip::address& address) {
  boost::system::error_code ec;
  if (address.is_v4()) {
    ip::network_v4 network = ip::make_network_v4(std::string(cidr), ec);
    if (ec) return false;
    return (address.to_v4().to_uint() & network.netmask().to_uint()) ==
           (network.address().to_uint() & network.netmask().to_uint());
  }
  ip::network_v6 network = ip::make_network_v6(std::string(cidr), ec);
  if (ec) return false;
  ip::network_v6 single(address.to_v6(), network.prefix_length());
  return single.canonical() == network.canonical();
}

// One NO_PROXY entry against a host (lower case) and port.
bool EntryMatches(absl::string_view entry, absl::string_view host, uint16_t port) {
  if (entry == "*") return true;
  // Split an optional ":port"; IPv6 entries are bracketed when they carry a port.
  absl::string_view name = entry;
  if (absl::StartsWith(name, "[")) {
    size_t close = name.find(']');
    if (close == absl::string_view::npos) return false;
    absl::string_view after = name.substr(close + 1);
    name = name.substr(1, close - 1);
    if (absl::ConsumePrefix(&after, ":")) {
      int p = 0;
      if (!absl::SimpleAtoi(after, &p) || p != port) return false;
    }
  } else if (std::count(name.begin(), name.end(), ':') == 1) {
    size_t colon = name.find(':');
    int p = 0;
    if (!absl::SimpleAtoi(name.substr(colon + 1), &p) || p != port) return false;
    name = name.substr(0, colon);
  }
  if (name.find('/') != absl::string_view::npos) {
    std::optional<ip::address> address = ParseIp(host);
    return address.has_value() && CidrContains(name, *address);
  }
  if (std::optional<ip::address> entry_ip = ParseIp(name); entry_ip.has_value()) {
    std::optional<ip::address> address = ParseIp(host);
    return address.has_value() && *address == *entry_ip;
  }
  if (!absl::ConsumePrefix(&name, "*.")) absl::ConsumePrefix(&name, ".");
  if (name.empty()) return false;
  return host == name || absl::EndsWith(host, absl::StrCat(".", name));
}

}  // namespace

std::vector<std::string> ParseNoProxy(absl::string_view value) {
  std::vector<std::string> entries;
  for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    entries.push_back(absl::AsciiStrToLower(absl::StripAsciiWhitespace(part)));
  }
  return entries;
}

bool IsLoopbackHost(absl::string_view host) {
  if (host == "localhost" || absl::EndsWith(host, ".localhost")) return true;
  std::optional<ip::address> address = ParseIp(host);
  return address.has_value() && address->is_loopback();
}

bool NoProxyMatches(const std::vector<std::string>& entries, const core::HttpUrl& target) {
  for (const std::string& entry : entries) {
    if (EntryMatches(entry, target.host, target.port)) return true;
  }
  return false;
}

absl::StatusOr<ProxyConfig> ProxyConfig::FromEnvironment() {
  ProxyConfig config;
  const char* used = nullptr;
  for (auto [lower, upper, slot] : {std::tuple{"http_proxy", "HTTP_PROXY", &config.http_proxy},
                                    std::tuple{"https_proxy", "HTTPS_PROXY", &config.https_proxy}}) {
    std::string value = GetProxyVariable(lower, upper, &used);
    if (value.empty()) continue;
    absl::StatusOr<core::HttpUrl> url = core::ParseProxyUrl(value);
    if (!url.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(used, ": ", url.status().message()));
    }
    if (url->https()) {
      return absl::InvalidArgumentError(
          absl::StrCat(used,
                       ": https:// proxies are not supported; use an http:// proxy (CONNECT tunnels "
                       "https traffic)"));
    }
    *slot = *std::move(url);
  }
  config.no_proxy = ParseNoProxy(GetProxyVariable("no_proxy", "NO_PROXY", &used));
  return config;
}

std::optional<core::HttpUrl> ProxyConfig::ProxyFor(const core::HttpUrl& target) const {
  const std::optional<core::HttpUrl>& proxy = target.https() ? https_proxy : http_proxy;
  if (!proxy.has_value() || IsLoopbackHost(target.host) || NoProxyMatches(no_proxy, target)) {
    return std::nullopt;
  }
  return proxy;
}

}  // namespace accelopt::llm

// Which proxy, if any, a request to an endpoint goes through: HTTPS_PROXY / HTTP_PROXY / NO_PROXY.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/core/http_url.h"

namespace accelopt::llm {

// Proxy settings, read once from the environment (or built directly by tests). Immutable; thread-safe.
//
// Rules (as curl and Go's net/http read the same variables):
// - https URLs use HTTPS_PROXY (tunnelled with CONNECT), http URLs use HTTP_PROXY (absolute-form requests);
//   the lower-case variable wins over the upper-case one.
// - NO_PROXY is a comma-separated list: "*" (everything), host names (matching the host and its
//   subdomains; a leading "." or "*." is ignored), IP literals, IPv4/IPv6 CIDR blocks, each optionally with
//   ":port" to match only that port.
// - Loopback targets (localhost, *.localhost, 127.0.0.0/8, ::1) never use a proxy.
struct ProxyConfig {
  std::optional<core::HttpUrl> http_proxy;
  std::optional<core::HttpUrl> https_proxy;
  std::vector<std::string> no_proxy;

  // INVALID_ARGUMENT naming the variable when a proxy URL does not parse.
  static absl::StatusOr<ProxyConfig> FromEnvironment();

  // The proxy for `target`, or nullopt for a direct connection.
  std::optional<core::HttpUrl> ProxyFor(const core::HttpUrl& target) const;
};

// Splits a NO_PROXY value into lower-case entries.
std::vector<std::string> ParseNoProxy(absl::string_view value);

// True when `host` (a name or IP literal, no brackets) is a loopback host.
bool IsLoopbackHost(absl::string_view host);

// True when a NO_PROXY entry list excludes `target` from proxying.
bool NoProxyMatches(const std::vector<std::string>& entries, const core::HttpUrl& target);

}  // namespace accelopt::llm

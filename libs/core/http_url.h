// Parsing of the http(s) URLs that name LLM endpoints and proxies (checked in configs, used by the LLM client).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::core {

// An absolute http or https URL split into the parts a client needs.
struct HttpUrl {
  // "http" or "https", lower case.
  std::string scheme;
  // Host name or IP literal, lower case, without the brackets of an IPv6 literal.
  std::string host;
  uint16_t port = 0;
  // Path without a trailing slash ("/v1", or empty for the root). Query strings are not supported.
  std::string path;
  // "user:password" before the host, percent-decoding not applied; empty when absent. Secret: never log.
  std::string userinfo;

  bool https() const { return scheme == "https"; }
  // host:port, with brackets around an IPv6 literal.
  std::string HostPort() const;
  // scheme://host:port<path>, without userinfo; safe to log.
  std::string Redacted() const;
};

// Parses an absolute http(s) URL. The port defaults to 80/443. INVALID_ARGUMENT describing the problem
// (no scheme, an unsupported scheme, an empty host, a bad port, a query or fragment).
absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url);

// Like ParseHttpUrl, but a URL without a scheme ("proxy.corp:3128") means http, as curl reads proxy variables.
absl::StatusOr<HttpUrl> ParseProxyUrl(absl::string_view url);

}  // namespace accelopt::core

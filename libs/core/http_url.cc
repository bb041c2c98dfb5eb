#include "libs/core/http_url.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace accelopt::core {

std::string HttpUrl::HostPort() const {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

std::string HttpUrl::Redacted() const { return absl::StrCat(scheme, "://", HostPort(), path); }

absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url) {
  HttpUrl out;
  size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("'", url, "' is not an absolute URL (no scheme://)"));
  }
  out.scheme = absl::AsciiStrToLower(url.substr(0, scheme_end));
  if (out.scheme != "http" && out.scheme != "https") {
    return absl::InvalidArgumentError(absl::StrCat("unsupported URL scheme '", out.scheme, "' (want http or https)"));
  }
  absl::string_view rest = url.substr(scheme_end + 3);
  if (rest.find_first_of("?#") != absl::string_view::npos) {
    return absl::InvalidArgumentError("URL must not have a query or fragment");
  }
  size_t path_start = rest.find('/');
  absl::string_view authority = rest.substr(0, path_start);
  absl::string_view path = path_start == absl::string_view::npos ? "" : rest.substr(path_start);
  if (size_t at = authority.rfind('@'); at != absl::string_view::npos) {
    out.userinfo = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  absl::string_view port_text;
  if (absl::StartsWith(authority, "[")) {
    size_t close = authority.find(']');
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("unterminated IPv6 literal in URL");
    out.host = std::string(authority.substr(1, close - 1));
    absl::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return absl::InvalidArgumentError("unexpected text after IPv6 literal in URL");
      port_text = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != absl::string_view::npos) {
    out.host = std::string(authority.substr(0, colon));
    port_text = authority.substr(colon + 1);
  } else {
    out.host = std::string(authority);
  }
  out.host = absl::AsciiStrToLower(out.host);
  if (out.host.empty()) return absl::InvalidArgumentError("URL has an empty host");
  int port = out.https() ? 443 : 80;
  if (!port_text.empty() && (!absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("bad port '", port_text, "' in URL"));
  }
  out.port = static_cast<uint16_t>(port);
  while (absl::ConsumeSuffix(&path, "/")) {
  }
  out.path = std::string(path);
  return out;
}

absl::StatusOr<HttpUrl> ParseProxyUrl(absl::string_view url) {
  if (url.find("://") == absl::string_view::npos) return ParseHttpUrl(absl::StrCat("http://", url));
  return ParseHttpUrl(url);
}

}  // namespace accelopt::core

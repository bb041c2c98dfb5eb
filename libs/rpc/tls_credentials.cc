#include "libs/rpc/tls_credentials.h"

#include <arpa/inet.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace accelopt::rpc {
namespace {

constexpr int kDefaultRefreshSeconds = 60;

absl::Status Readable(const std::string& path, absl::string_view field) {
  std::ifstream in(path);
  if (!in) return absl::FailedPreconditionError(absl::StrCat(field, ": cannot read '", path, "'"));
  return absl::OkStatus();
}

absl::Status CheckFiles(const v1::TlsConfig& tls, absl::string_view prefix) {
  if (tls.cert_file().empty() != tls.key_file().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ": cert_file and key_file go together"));
  }
  if (!tls.cert_file().empty()) {
    if (absl::Status s = Readable(tls.cert_file(), absl::StrCat(prefix, ".cert_file")); !s.ok()) return s;
    if (absl::Status s = Readable(tls.key_file(), absl::StrCat(prefix, ".key_file")); !s.ok()) return s;
  }
  if (!tls.ca_file().empty()) {
    if (absl::Status s = Readable(tls.ca_file(), absl::StrCat(prefix, ".ca_file")); !s.ok()) return s;
  }
  return absl::OkStatus();
}

unsigned int RefreshSeconds(const v1::TlsConfig& tls) {
  return static_cast<unsigned int>(tls.refresh_seconds() > 0 ? tls.refresh_seconds() : kDefaultRefreshSeconds);
}

}  // namespace

bool IsLoopbackAddress(absl::string_view address) {
  auto colon = address.rfind(':');
  absl::string_view host = colon == absl::string_view::npos ? address : address.substr(0, colon);
  if (host == "localhost" || host == "[::1]" || host == "::1") return true;
  in_addr ip{};
  std::string text(host);
  if (inet_pton(AF_INET, text.c_str(), &ip) != 1) return false;
  return (ntohl(ip.s_addr) >> 24) == 127;
}

bool HasTls(const v1::TlsConfig& tls) { return !tls.cert_file().empty(); }

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const v1::ServerConfig& server) {
  const v1::TlsConfig& tls = server.tls();
  if (!HasTls(tls)) {
    if (!tls.key_file().empty() || !tls.ca_file().empty() || tls.require_client_cert()) {
      return absl::InvalidArgumentError("server.tls: cert_file is required when any other TLS field is set");
    }
    return grpc::InsecureServerCredentials();
  }
  if (absl::Status s = CheckFiles(tls, "server.tls"); !s.ok()) return s;
  if (tls.require_client_cert() && tls.ca_file().empty()) {
    return absl::InvalidArgumentError("server.tls: require_client_cert needs ca_file to verify clients");
  }
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      tls.key_file(), tls.cert_file(), tls.ca_file(), RefreshSeconds(tls));
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!tls.ca_file().empty()) options.watch_root_certs();
  // With a CA, a client certificate is verified when offered (and required for mutual TLS); without one,
  // none is asked for.
  options.set_cert_request_type(tls.require_client_cert() ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                : tls.ca_file().empty()   ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                          : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  return grpc::experimental::TlsServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const v1::TlsConfig& tls) {
  if (!HasTls(tls) && tls.ca_file().empty()) return grpc::InsecureChannelCredentials();
  if (absl::Status s = CheckFiles(tls, "tls"); !s.ok()) return s;
  grpc::experimental::TlsChannelCredentialsOptions options;
  if (HasTls(tls) || !tls.ca_file().empty()) {
    auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
        tls.key_file(), tls.cert_file(), tls.ca_file(), RefreshSeconds(tls));
    options.set_certificate_provider(provider);
    if (!tls.ca_file().empty()) options.watch_root_certs();
    if (HasTls(tls)) options.watch_identity_key_cert_pairs();
  }
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace accelopt::rpc

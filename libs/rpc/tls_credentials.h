// gRPC credentials from TlsConfig: TLS or mutual TLS for servers and clients, with certificate files watched
// and reloaded when they change (grpc::experimental::FileWatcherCertificateProvider).
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/config.pb.h"

namespace accelopt::rpc {

// True when `address` (host:port) binds only the loopback interface: 127.0.0.0/8, ::1 or localhost.
bool IsLoopbackAddress(absl::string_view address);

// True when `tls` names a certificate (the listener serves TLS).
bool HasTls(const v1::TlsConfig& tls);

// Credentials of a listener: TLS from server.tls (mutual when require_client_cert), plaintext when
// server.tls is empty. FAILED_PRECONDITION naming the file when one cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const v1::ServerConfig& server);

// Credentials of a client: TLS verifying the server against tls.ca_file (system roots when empty), presenting
// tls.cert_file/key_file as client identity when given; plaintext when `tls` is empty.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const v1::TlsConfig& tls);

}  // namespace accelopt::rpc

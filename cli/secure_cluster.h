// The security material of an `accelopt up --secure` cluster, kept in <data_dir>/tls/:
//
//   ca.pem, ca-key.pem           the cluster's own certificate authority (keys 0600)
//   <service>.pem, <service>-key.pem   one per service: CN = the service name, SAN localhost and 127.0.0.1
//   cli.pem, cli-key.pem         the CLI's client certificate (identity "accelopt-cli", granted nothing)
//   tokens.yaml                  SHA-256 hashes of the bearer tokens, with tenant and role
//   admin.token                  the admin token created by `up --secure` (0600)
//
// Every service serves TLS; planner, executor and profilers require a client certificate and accept only the
// orchestrator's identity ("orchestrator", role internal); the orchestrator and memory accept bearer tokens.
// Audit logs go to <data_dir>/audit/<service>.log.
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accelopt::cli {

std::string SecureDir(const std::string& data_dir);
// True when `data_dir` holds the material of a secure cluster (its tls/ca.pem exists).
bool IsSecureDataDir(const std::string& data_dir);

// Creates the CA, the certificates of `service_names`, the CLI certificate, the token file and the admin
// token, keeping whatever already exists (a second `up --secure` reuses them).
absl::Status EnsureSecureMaterial(const std::string& data_dir, const std::vector<std::string>& service_names);

// The `tls:` and `auth:` fields (YAML flow, starting with ", ") that go inside `server: {...}` of a
// service's config. `internal` services require a client certificate.
std::string SecureServerFields(const std::string& data_dir, const std::string& service, bool internal);
// The orchestrator's `client_tls:` line (mutual TLS to the other services).
std::string OrchestratorClientTls(const std::string& data_dir);

// Credentials that reach the services of a secure cluster (TLS with its CA and the CLI certificate), or
// plaintext when `data_dir` is not secure.
std::shared_ptr<grpc::ChannelCredentials> ClusterChannelCredentials(const std::string& data_dir);

// A new random bearer token for `tenant` with `role` ("viewer", "submitter" or "admin"); its hash is appended
// to <data_dir>/tls/tokens.yaml. INVALID_ARGUMENT naming a bad tenant or role; FAILED_PRECONDITION when the
// data dir holds no secure cluster.
absl::StatusOr<std::string> CreateToken(const std::string& data_dir, const std::string& tenant,
                                        const std::string& role);

}  // namespace accelopt::cli

// How a client command reaches a cluster securely. Every command that calls a service accepts
//   --token T   (else $ACCELOPT_TOKEN, else <data_dir>/tls/admin.token of an `up --secure` cluster)
//   --ca FILE   (else $ACCELOPT_CA, else <data_dir>/tls/ca.pem)
//   --cert FILE --key FILE  (a client certificate for mutual TLS; else the data dir's CLI certificate)
// A bearer token is sent only over TLS.
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "cli/args.h"

namespace accelopt::cli {

// The value options above, to add to a command's option set.
const std::set<std::string>& ConnectionOptions();

// Channel credentials from the options, the environment and `data_dir`: plaintext when no CA is known,
// TLS (with the bearer token as call credentials) otherwise. INVALID_ARGUMENT for a token without TLS,
// a --cert without --key, or an unreadable file.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(const Args& args,
                                                                            const std::string& data_dir);

// --server, else $ACCELOPT_SERVER, else "".
std::string ServerOption(const Args& args);

}  // namespace accelopt::cli

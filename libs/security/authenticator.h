// Establishes the Principal of an incoming call from its bearer token (the `authorization: Bearer <token>`
// metadata, checked against a token file that stores only SHA-256 hashes) or its verified mTLS client
// identity (certificate CN or DNS subjectAltName, from AuthConfig.identities).
//
// With an empty AuthConfig, authentication is off: every caller is the anonymous admin of tenant "default"
// (loopback development clusters). The token file is re-read when it changes.
#pragma once

#include <grpcpp/server_context.h>

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "accelopt/v1/config.pb.h"
#include "libs/security/principal.h"

namespace accelopt::security {

class Authenticator {
 public:
  // Loads the token file now; INVALID_ARGUMENT/NOT_FOUND naming the file or the bad entry. The file is checked
  // for changes at most once per `recheck`.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Create(const v1::AuthConfig& config,
                                                               absl::Duration recheck = absl::Seconds(1));

  bool enabled() const { return enabled_; }
  // auth.namespace_grants, checked at Create (namespace and tenant required).
  const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& namespace_grants() const {
    return config_.namespace_grants();
  }

  // UNAUTHENTICATED ("missing bearer token", "unknown token", ...) or the caller's principal.
  absl::StatusOr<Principal> Authenticate(const grpc::ServerContextBase& context);

  // The same from explicit inputs (the bearer value and verified peer identities), for tests and non-gRPC use.
  absl::StatusOr<Principal> AuthenticateToken(absl::string_view bearer_header,
                                              const std::vector<std::string>& peer_identities);

 private:
  struct Entry {
    std::string tenant;
    Role role;
  };
  Authenticator(v1::AuthConfig config, absl::Duration recheck) : config_(std::move(config)), recheck_(recheck) {}
  // Re-reads the token file when its mtime changed; checks at most once per `recheck_` unless `force`
  // (an unknown token: it may have been added just now). A file that cannot be read or parsed fails closed: no
  // token is accepted (the error is logged once and names why) until a good file is back, so a revocation that
  // came with a broken edit or a removed file never leaves the revoked token working.
  absl::Status ReloadIfChanged(bool force = false) ABSL_LOCKS_EXCLUDED(mu_);

  const v1::AuthConfig config_;
  const absl::Duration recheck_;
  bool enabled_ = false;
  std::map<std::string, Entry> identities_;
  absl::Mutex mu_;
  std::map<std::string, Entry> tokens_ ABSL_GUARDED_BY(mu_);  // by SHA-256 hex
  int64_t token_file_mtime_ns_ ABSL_GUARDED_BY(mu_) = -1;
  absl::Status token_file_status_ ABSL_GUARDED_BY(mu_);  // why no token is accepted, when the file is bad
  absl::Time next_stat_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// Parses a token file's text (YAML/JSON TokenFile) into hash -> (tenant, role). `source` names it in errors.
absl::StatusOr<std::map<std::string, std::pair<std::string, Role>>> ParseTokenFile(absl::string_view text,
                                                                                   absl::string_view source);

}  // namespace accelopt::security

// Authenticates and authorizes one RPC: the caller's Principal (Authenticator) must hold at least a role,
// and every refusal is recorded in the audit log (action "authenticate" for unknown callers, the action's
// name for callers without the role).
//
//   CallAuthorizer authz(authenticator.get(), audit.get());   // either may be null: authentication off
//   absl::StatusOr<Principal> who = authz.Authorize(*context, Role::kSubmitter, "submit", "job/new");
#pragma once

#include <grpcpp/server_context.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/config.pb.h"
#include "libs/security/audit_log.h"
#include "libs/security/authenticator.h"
#include "libs/security/principal.h"

namespace accelopt::security {

class CallAuthorizer {
 public:
  // Neither is owned; both must outlive the authorizer. A null or disabled authenticator lets every caller
  // in as the anonymous admin of tenant "default" (or as internal, for RequireInternal).
  CallAuthorizer(Authenticator* authenticator, AuditLog* audit) : authenticator_(authenticator), audit_(audit) {}

  bool enabled() const { return authenticator_ != nullptr && authenticator_->enabled(); }

  // UNAUTHENTICATED when the caller is unknown, PERMISSION_DENIED ("<action> needs role <role>; caller has
  // <role>") when its role is below `needed`; otherwise the principal.
  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase& context, Role needed, absl::string_view action,
                                      absl::string_view target);

  // For internal services: only a caller with role internal (the orchestrator's mTLS identity) passes when
  // authentication is configured.
  absl::Status RequireInternal(const grpc::ServerContextBase& context, absl::string_view action);

  // The admins' namespace grants (auth.namespace_grants); empty when authentication is off.
  const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& namespace_grants() const;

  // Records an action's outcome in the audit log (no-op without one).
  void Audit(absl::string_view action, const Principal* principal, absl::string_view target,
             const absl::Status& outcome, absl::string_view detail = "");

 private:
  Authenticator* authenticator_;
  AuditLog* audit_;
};

// The authenticator and audit log a service builds from ServerConfig.auth; both null when auth is empty.
// `service` names the service in audit lines.
struct ServiceAuth {
  std::unique_ptr<Authenticator> authenticator;
  std::unique_ptr<AuditLog> audit;
  CallAuthorizer authorizer() const { return CallAuthorizer(authenticator.get(), audit.get()); }
};
absl::StatusOr<ServiceAuth> MakeServiceAuth(const v1::AuthConfig& config, const std::string& service);

}  // namespace accelopt::security

#include "libs/security/call_authorizer.h"

#include "absl/strings/str_cat.h"

namespace accelopt::security {

const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& CallAuthorizer::namespace_grants() const {
  static const auto* const kNone = new google::protobuf::RepeatedPtrField<v1::NamespaceGrant>();
  return authenticator_ != nullptr ? authenticator_->namespace_grants() : *kNone;
}

absl::StatusOr<Principal> CallAuthorizer::Authorize(const grpc::ServerContextBase& context, Role needed,
                                                    absl::string_view action, absl::string_view target) {
  if (!enabled()) return Principal{"default", Role::kAdmin, "anonymous"};
  absl::StatusOr<Principal> principal = authenticator_->Authenticate(context);
  if (!principal.ok()) {
    Audit("authenticate", nullptr, absl::StrCat(action, " ", target), principal.status());
    return principal.status();
  }
  if (!principal->AtLeast(needed)) {
    absl::Status denied = absl::PermissionDeniedError(
        absl::StrCat(action, " needs role ", RoleName(needed), "; caller has ", RoleName(principal->role)));
    Audit(action, &*principal, target, denied);
    return denied;
  }
  return principal;
}

absl::Status CallAuthorizer::RequireInternal(const grpc::ServerContextBase& context, absl::string_view action) {
  if (!enabled()) return absl::OkStatus();
  return Authorize(context, Role::kInternal, action, "internal").status();
}

void CallAuthorizer::Audit(absl::string_view action, const Principal* principal, absl::string_view target,
                           const absl::Status& outcome, absl::string_view detail) {
  if (audit_ != nullptr) audit_->Record(action, principal, target, outcome, detail);
}

absl::StatusOr<ServiceAuth> MakeServiceAuth(const v1::AuthConfig& config, const std::string& service) {
  ServiceAuth auth;
  if (config.token_file().empty() && config.identities_size() == 0) return auth;
  absl::StatusOr<std::unique_ptr<Authenticator>> authenticator = Authenticator::Create(config);
  if (!authenticator.ok()) return authenticator.status();
  auth.authenticator = *std::move(authenticator);
  absl::StatusOr<std::unique_ptr<AuditLog>> audit = AuditLog::Open(config.audit_file(), service);
  if (!audit.ok()) return audit.status();
  auth.audit = *std::move(audit);
  return auth;
}

}  // namespace accelopt::security

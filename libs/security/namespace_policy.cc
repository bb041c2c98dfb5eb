#include "libs/security/namespace_policy.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace accelopt::security {

bool OwnsNamespace(const Principal& principal, absl::string_view memory_namespace) {
  if (principal.role == Role::kAdmin || principal.role == Role::kInternal) return true;
  if (principal.tenant.empty()) return false;
  return memory_namespace == principal.tenant ||
         absl::StartsWith(memory_namespace, absl::StrCat(principal.tenant, ":"));
}

absl::Status CheckNamespace(const Principal& principal, absl::string_view memory_namespace) {
  if (OwnsNamespace(principal, memory_namespace)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("memory namespace '", memory_namespace,
                                                  "' does not belong to tenant '", principal.tenant,
                                                  "' (tenants own '<tenant>' and '<tenant>:...')"));
}

bool GrantedNamespace(const Principal& principal, absl::string_view memory_namespace,
                      const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& grants) {
  if (principal.tenant.empty() || memory_namespace.empty()) return false;
  for (const v1::NamespaceGrant& grant : grants) {
    if (grant.tenant() != principal.tenant) continue;
    absl::string_view granted = grant.namespace_();
    if (granted == memory_namespace) return true;
    if (absl::EndsWith(granted, ":*") &&
        absl::StartsWith(memory_namespace, granted.substr(0, granted.size() - 1))) {  // "prefix:"
      return true;
    }
  }
  return false;
}

absl::Status CheckNamespaceUse(const Principal& principal, absl::string_view memory_namespace,
                               const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& grants) {
  if (OwnsNamespace(principal, memory_namespace) || GrantedNamespace(principal, memory_namespace, grants)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat("memory namespace '", memory_namespace,
                                                  "' does not belong to tenant '", principal.tenant,
                                                  "' and was not granted to it (auth.namespace_grants)"));
}

}  // namespace accelopt::security

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

}  // namespace accelopt::security

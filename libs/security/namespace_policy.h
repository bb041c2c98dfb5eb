// Who may use a memory namespace. A tenant owns the namespace named like the tenant and every namespace
// under "<tenant>:" ("team-a:softmax"); admins and internal callers use every namespace. A job's private memory ("job"
// or empty in SearchParams.memory_namespace) belongs to the job and is always allowed at submit.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/config.pb.h"
#include "libs/security/principal.h"

namespace accelopt::security {

bool OwnsNamespace(const Principal& principal, absl::string_view memory_namespace);

// PERMISSION_DENIED naming the namespace and the tenant unless the principal owns it (what importing needs).
absl::Status CheckNamespace(const Principal& principal, absl::string_view memory_namespace);

// Whether an admin granted the namespace to the principal's tenant (auth.namespace_grants: an exact name, or
// "prefix:*" for every namespace under "prefix:").
bool GrantedNamespace(const Principal& principal, absl::string_view memory_namespace,
                      const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& grants);

// What running a job on a namespace, listing and exporting it need: ownership or a grant. PERMISSION_DENIED
// naming the namespace and the tenant otherwise.
absl::Status CheckNamespaceUse(const Principal& principal, absl::string_view memory_namespace,
                               const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& grants);

}  // namespace accelopt::security

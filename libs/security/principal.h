// Who is calling: a tenant and a role, established from a bearer token or an mTLS client identity.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace accelopt::security {

// Roles in increasing power. kInternal is a cluster service (the orchestrator calling an internal service).
enum class Role { kViewer = 0, kSubmitter = 1, kAdmin = 2, kInternal = 3 };

// INVALID_ARGUMENT naming the value when it is not viewer, submitter, admin or internal.
absl::StatusOr<Role> ParseRole(absl::string_view role);
const char* RoleName(Role role);

struct Principal {
  std::string tenant;
  Role role = Role::kViewer;
  // How it was established, for the audit log: "token:<first 8 hex of its hash>", "mtls:<identity>" or
  // "anonymous" (authentication off).
  std::string source;

  bool AtLeast(Role needed) const { return static_cast<int>(role) >= static_cast<int>(needed); }
  // Admins and internal callers act for every tenant; others only for their own.
  bool ActsFor(absl::string_view owner_tenant) const {
    return role == Role::kAdmin || role == Role::kInternal || tenant == owner_tenant;
  }
};

}  // namespace accelopt::security

#include "libs/security/principal.h"

#include "absl/strings/str_cat.h"

namespace accelopt::security {

absl::StatusOr<Role> ParseRole(absl::string_view role) {
  if (role == "viewer") return Role::kViewer;
  if (role == "submitter") return Role::kSubmitter;
  if (role == "admin") return Role::kAdmin;
  if (role == "internal") return Role::kInternal;
  return absl::InvalidArgumentError(absl::StrCat("role '", role, "' is not one of viewer, submitter, admin, internal"));
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kSubmitter:
      return "submitter";
    case Role::kAdmin:
      return "admin";
    case Role::kInternal:
      return "internal";
  }
  return "viewer";
}

}  // namespace accelopt::security

#include "libs/security/namespace_policy.h"

#include <gtest/gtest.h>

namespace accelopt::security {
namespace {

TEST(NamespacePolicyTest, TenantsOwnTheirNameAndEverythingUnderIt) {
  Principal a{"team-a", Role::kSubmitter, "token:1"};
  EXPECT_TRUE(OwnsNamespace(a, "team-a"));
  EXPECT_TRUE(OwnsNamespace(a, "team-a:matmul"));
  EXPECT_FALSE(OwnsNamespace(a, "team-ab"));
  EXPECT_FALSE(OwnsNamespace(a, "team-b:matmul"));
  EXPECT_FALSE(OwnsNamespace(a, "shared"));
  EXPECT_EQ(CheckNamespace(a, "team-b").code(), absl::StatusCode::kPermissionDenied);
}

TEST(NamespacePolicyTest, AdminsAndInternalCallersUseEveryNamespace) {
  EXPECT_TRUE(OwnsNamespace(Principal{"ops", Role::kAdmin, "token:2"}, "team-b:x"));
  EXPECT_TRUE(OwnsNamespace(Principal{"cluster", Role::kInternal, "mtls:orchestrator"}, "anything"));
  EXPECT_FALSE(OwnsNamespace(Principal{"", Role::kViewer, "token:3"}, ":x"));
}

}  // namespace
}  // namespace accelopt::security

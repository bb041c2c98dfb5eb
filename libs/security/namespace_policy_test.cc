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

TEST(NamespacePolicyTest, AnAdminsGrantLetsAnotherTenantUseButNotImport) {
  google::protobuf::RepeatedPtrField<v1::NamespaceGrant> grants;
  v1::NamespaceGrant* shared = grants.Add();
  shared->set_namespace_("team-a:attention");
  shared->set_tenant("team-b");
  v1::NamespaceGrant* prefix = grants.Add();
  prefix->set_namespace_("team-c:*");
  prefix->set_tenant("team-b");
  Principal b{"team-b", Role::kSubmitter, "token:4"};
  EXPECT_TRUE(CheckNamespaceUse(b, "team-a:attention", grants).ok());
  EXPECT_TRUE(CheckNamespaceUse(b, "team-c:matmul", grants).ok());
  EXPECT_TRUE(CheckNamespaceUse(b, "team-b", grants).ok());  // its own
  EXPECT_EQ(CheckNamespaceUse(b, "team-a:matmul", grants).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckNamespaceUse(b, "team-c", grants).code(), absl::StatusCode::kPermissionDenied);
  Principal d{"team-d", Role::kSubmitter, "token:5"};
  EXPECT_EQ(CheckNamespaceUse(d, "team-a:attention", grants).code(), absl::StatusCode::kPermissionDenied);
  // Importing stays with the owner.
  EXPECT_EQ(CheckNamespace(b, "team-a:attention").code(), absl::StatusCode::kPermissionDenied);
}

TEST(NamespacePolicyTest, AdminsAndInternalCallersUseEveryNamespace) {
  EXPECT_TRUE(OwnsNamespace(Principal{"ops", Role::kAdmin, "token:2"}, "team-b:x"));
  EXPECT_TRUE(OwnsNamespace(Principal{"cluster", Role::kInternal, "mtls:orchestrator"}, "anything"));
  EXPECT_FALSE(OwnsNamespace(Principal{"", Role::kViewer, "token:3"}, ":x"));
}

}  // namespace
}  // namespace accelopt::security

#include "libs/security/authenticator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "libs/core/sha256.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::security {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(AuthenticatorTest, EmptyConfigMeansAuthenticationOff) {
  auto auth = Authenticator::Create(v1::AuthConfig());
  ASSERT_TRUE(auth.ok());
  EXPECT_FALSE((*auth)->enabled());
  auto principal = (*auth)->AuthenticateToken("", {});
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->role, Role::kAdmin);
  EXPECT_EQ(principal->source, "anonymous");
}

TEST(AuthenticatorTest, TokensAreCheckedByHashAndMapToTenantAndRole) {
  testing::ScratchDir scratch;
  const std::string path = scratch.Path("tokens.yaml");
  Write(path, "tokens:\n  - {sha256: " + core::Sha256Hex("secret-a") + ", tenant: team-a, role: submitter}\n" +
                  "  - {sha256: " + core::Sha256Hex("secret-admin") + ", tenant: ops, role: admin}\n");
  v1::AuthConfig config;
  config.set_token_file(path);
  auto auth = Authenticator::Create(config);
  ASSERT_TRUE(auth.ok()) << auth.status();
  auto a = (*auth)->AuthenticateToken("Bearer secret-a", {});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->tenant, "team-a");
  EXPECT_EQ(a->role, Role::kSubmitter);
  EXPECT_EQ(a->source, "token:" + core::Sha256Hex("secret-a").substr(0, 8));
  EXPECT_TRUE(a->ActsFor("team-a"));
  EXPECT_FALSE(a->ActsFor("team-b"));
  auto admin = (*auth)->AuthenticateToken("Bearer secret-admin", {});
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->ActsFor("team-b"));

  EXPECT_EQ((*auth)->AuthenticateToken("Bearer wrong", {}).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ((*auth)->AuthenticateToken("", {}).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ((*auth)->AuthenticateToken("Basic abc", {}).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(AuthenticatorTest, ClientCertificateIdentitiesStandInForTokens) {
  v1::AuthConfig config;
  auto* grant = config.add_identities();
  grant->set_identity("orchestrator");
  grant->set_tenant("cluster");
  grant->set_role("internal");
  auto auth = Authenticator::Create(config);
  ASSERT_TRUE(auth.ok());
  auto p = (*auth)->AuthenticateToken("", {"orchestrator"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->role, Role::kInternal);
  EXPECT_EQ(p->source, "mtls:orchestrator");
  auto stranger = (*auth)->AuthenticateToken("", {"planner"});
  EXPECT_EQ(stranger.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(stranger.status().message().find("'planner' is not granted"), std::string::npos);
}

TEST(TokenFileTest, PlainTokensAndBadRolesAreRejectedWithTheirPlace) {
  auto plain = ParseTokenFile("tokens: [{sha256: my-secret-token, tenant: a}]", "tokens.yaml");
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plain.status().message().find("tokens.yaml: tokens[0].sha256"), std::string::npos) << plain.status();
  EXPECT_EQ(plain.status().message().find("my-secret-token"), std::string::npos) << "never echo a token";
  auto role = ParseTokenFile("tokens: [{sha256: " + core::Sha256Hex("x") + ", tenant: a, role: root}]", "t");
  EXPECT_NE(role.status().message().find("tokens[0].role"), std::string::npos) << role.status();
  auto unknown = ParseTokenFile("tokens: [{sha256: " + core::Sha256Hex("x") + ", tenant: a, owner: b}]", "t");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AuthenticatorTest, TokenFileChangesAreReloaded) {
  testing::ScratchDir scratch;
  const std::string path = scratch.Path("tokens.yaml");
  Write(path, "tokens: [{sha256: " + core::Sha256Hex("old") + ", tenant: a}]\n");
  v1::AuthConfig config;
  config.set_token_file(path);
  auto auth = Authenticator::Create(config, absl::ZeroDuration());
  ASSERT_TRUE(auth.ok());
  ASSERT_TRUE((*auth)->AuthenticateToken("Bearer old", {}).ok());
  Write(path, "tokens: [{sha256: " + core::Sha256Hex("new") + ", tenant: a}]\n");
  // A bumped mtime (same-second rewrites can keep it) makes the change visible on the next check.
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(5));
  EXPECT_TRUE((*auth)->AuthenticateToken("Bearer new", {}).ok());
  EXPECT_FALSE((*auth)->AuthenticateToken("Bearer old", {}).ok());
}

TEST(AuthenticatorTest, ABrokenOrRemovedTokenFileFailsClosed) {
  // removing a token with an edit that breaks the file, or moving the file away, must not leave it working
  testing::ScratchDir scratch;
  const std::string path = scratch.Path("tokens.yaml");
  Write(path, "tokens: [{sha256: " + core::Sha256Hex("bob") + ", tenant: b}]\n");
  v1::AuthConfig config;
  config.set_token_file(path);
  auto auth = Authenticator::Create(config, absl::ZeroDuration());
  ASSERT_TRUE(auth.ok());
  ASSERT_TRUE((*auth)->AuthenticateToken("Bearer bob", {}).ok());
  auto bump = [&] {
    std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(5));
  };
  Write(path, "tokens: [{sha256: " + core::Sha256Hex("bob") + ", tenant: b\n");  // the edit lost a bracket
  bump();
  absl::StatusOr<Principal> broken = (*auth)->AuthenticateToken("Bearer bob", {});
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StrContains(broken.status().message(), "refused until the server's token file is fixed"))
      << broken.status();
  Write(path, "tokens: [{sha256: " + core::Sha256Hex("bob") + ", tenant: b}]\n");
  bump();
  EXPECT_TRUE((*auth)->AuthenticateToken("Bearer bob", {}).ok());
  std::filesystem::remove(path);
  absl::StatusOr<Principal> removed = (*auth)->AuthenticateToken("Bearer bob", {});
  EXPECT_EQ(removed.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StrContains(removed.status().message(), "cannot read")) << removed.status();
}

}  // namespace
}  // namespace accelopt::security

#include "libs/security/authenticator.h"

#include <sys/stat.h>

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libs/config/config_loader.h"
#include "libs/core/file.h"
#include "libs/core/log.h"
#include "libs/core/sha256.h"

namespace accelopt::security {
namespace {

constexpr absl::string_view kBearer = "Bearer ";

int64_t MtimeNs(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

bool IsSha256Hex(absl::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(c) || absl::ascii_isupper(c)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::pair<std::string, Role>>> ParseTokenFile(absl::string_view text,
                                                                                   absl::string_view source) {
  v1::TokenFile file;
  if (absl::Status s = config::ParseConfigText(text, source, &file); !s.ok()) return s;
  std::map<std::string, std::pair<std::string, Role>> out;
  for (int i = 0; i < file.tokens_size(); ++i) {
    const v1::TokenEntry& entry = file.tokens(i);
    std::string where = absl::StrCat(source, ": tokens[", i, "]");
    if (!IsSha256Hex(entry.sha256())) {
      return absl::InvalidArgumentError(absl::StrCat(where,
                                                     ".sha256: must be 64 lowercase hex digits (the token's "
                                                     "SHA-256, never the token itself)"));
    }
    if (entry.tenant().empty()) return absl::InvalidArgumentError(absl::StrCat(where, ".tenant: required"));
    absl::StatusOr<Role> role = ParseRole(entry.role().empty() ? "submitter" : entry.role());
    if (!role.ok() || *role == Role::kInternal) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".role: '", entry.role(), "' is not one of viewer, submitter, admin"));
    }
    if (!out.emplace(entry.sha256(), std::make_pair(entry.tenant(), *role)).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the same token appears twice"));
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Create(const v1::AuthConfig& config,
                                                                     absl::Duration recheck) {
  std::unique_ptr<Authenticator> auth(new Authenticator(config, recheck));
  auth->enabled_ = !config.token_file().empty() || config.identities_size() > 0;
  for (int i = 0; i < config.identities_size(); ++i) {
    const v1::IdentityGrant& grant = config.identities(i);
    absl::StatusOr<Role> role = ParseRole(grant.role());
    if (!role.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("auth.identities[", i, "].role: ", role.status().message()));
    }
    if (grant.identity().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("auth.identities[", i, "].identity: required"));
    }
    auth->identities_[grant.identity()] = Entry{grant.tenant(), *role};
  }
  for (int i = 0; i < config.namespace_grants_size(); ++i) {
    const v1::NamespaceGrant& grant = config.namespace_grants(i);
    if (grant.namespace_().empty() || grant.tenant().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("auth.namespace_grants[", i, "]: namespace and tenant are required"));
    }
  }
  if (!config.token_file().empty()) {
    if (absl::Status s = auth->ReloadIfChanged(); !s.ok()) return s;
  }
  return auth;
}

absl::Status Authenticator::ReloadIfChanged(bool force) {
  absl::MutexLock lock(&mu_);
  absl::Time now = absl::Now();
  if (!force && now < next_stat_) return absl::OkStatus();
  next_stat_ = now + recheck_;
  int64_t mtime = MtimeNs(config_.token_file());
  if (mtime >= 0 && mtime == token_file_mtime_ns_) return token_file_status_;
  absl::StatusOr<std::map<std::string, std::pair<std::string, Role>>> parsed =
      absl::NotFoundError(absl::StrCat("auth.token_file: cannot read '", config_.token_file(), "'"));
  if (mtime >= 0) {
    absl::StatusOr<std::string> text = core::ReadFile(config_.token_file());
    parsed = text.ok() ? ParseTokenFile(*text, config_.token_file()) : text.status();
  }
  tokens_.clear();
  token_file_mtime_ns_ = mtime;
  if (!parsed.ok()) {
    if (token_file_status_.ok() || token_file_status_.message() != parsed.status().message()) {
      ACCELOPT_LOG(ERROR) << "no bearer token is accepted until the token file is good again: "
                          << parsed.status().message();
    }
    token_file_status_ = parsed.status();
    return token_file_status_;
  }
  for (auto& [hash, value] : *parsed) tokens_[hash] = Entry{value.first, value.second};
  token_file_status_ = absl::OkStatus();
  return absl::OkStatus();
}

absl::StatusOr<Principal> Authenticator::AuthenticateToken(absl::string_view bearer_header,
                                                           const std::vector<std::string>& peer_identities) {
  if (!enabled_) return Principal{"default", Role::kAdmin, "anonymous"};
  if (!bearer_header.empty()) {
    if (!absl::StartsWith(bearer_header, kBearer)) {
      return absl::UnauthenticatedError("authorization metadata is not 'Bearer <token>'");
    }
    if (config_.token_file().empty()) return absl::UnauthenticatedError("this server accepts no bearer tokens");
    if (absl::Status file = ReloadIfChanged(); !file.ok()) {  // fails closed (see ReloadIfChanged)
      return absl::UnauthenticatedError(
          absl::StrCat("bearer tokens are refused until the server's token file is fixed: ", file.message()));
    }
    std::string hash = core::Sha256Hex(bearer_header.substr(kBearer.size()));
    auto lookup = [&]() -> std::optional<Principal> {
      absl::MutexLock lock(&mu_);
      auto it = tokens_.find(hash);
      if (it == tokens_.end()) return std::nullopt;
      return Principal{it->second.tenant, it->second.role, absl::StrCat("token:", hash.substr(0, 8))};
    };
    std::optional<Principal> principal = lookup();
    // A token created a moment ago (`accelopt token create`): look at the file now rather than at the next
    // periodic check. Only a stat unless the file changed.
    if (!principal.has_value() && ReloadIfChanged(/*force=*/true).ok()) principal = lookup();
    if (!principal.has_value()) return absl::UnauthenticatedError("unknown bearer token");
    return *principal;
  }
  for (const std::string& identity : peer_identities) {
    auto it = identities_.find(identity);
    if (it != identities_.end()) return Principal{it->second.tenant, it->second.role, "mtls:" + identity};
  }
  if (!peer_identities.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat("client certificate identity '", peer_identities.front(), "' is not granted access"));
  }
  return absl::UnauthenticatedError("missing bearer token (authorization: Bearer <token>) or client certificate");
}

absl::StatusOr<Principal> Authenticator::Authenticate(const grpc::ServerContextBase& context) {
  if (!enabled_) return AuthenticateToken("", {});
  std::string bearer;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end())
    bearer.assign(it->second.data(), it->second.size());
  std::vector<std::string> identities;
  if (std::shared_ptr<const grpc::AuthContext> auth = context.auth_context(); auth && auth->IsPeerAuthenticated()) {
    for (const char* property : {"x509_common_name", "x509_subject_alternative_name"}) {
      for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
        identities.emplace_back(value.data(), value.size());
      }
    }
  }
  return AuthenticateToken(bearer, identities);
}

}  // namespace accelopt::security

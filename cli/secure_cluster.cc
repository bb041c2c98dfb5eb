#include "cli/secure_cluster.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/core/file.h"
#include "libs/core/sha256.h"
#include "libs/rpc/tls_credentials.h"
#include "libs/security/pki.h"
#include "libs/security/principal.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

constexpr absl::Duration kValidity = absl::Hours(24 * 365);
constexpr char kCliIdentity[] = "accelopt-cli";

std::string Path(const std::string& data_dir, const std::string& file) { return SecureDir(data_dir) + "/" + file; }

// Writes `contents` to `path` with mode 0600 (private keys, tokens).
absl::Status WritePrivate(const std::string& path, const std::string& contents) {
  if (absl::Status s = core::WriteFileAtomic(path, contents); !s.ok()) return s;
  if (chmod(path.c_str(), 0600) != 0) return absl::UnavailableError(absl::StrCat("cannot chmod 0600 ", path));
  return absl::OkStatus();
}

absl::Status WritePair(const std::string& data_dir, const std::string& name, const security::PemPair& pair) {
  if (absl::Status s = core::WriteFileAtomic(Path(data_dir, name + ".pem"), pair.certificate); !s.ok()) return s;
  return WritePrivate(Path(data_dir, name + "-key.pem"), pair.private_key);
}

absl::StatusOr<security::PemPair> LoadPair(const std::string& data_dir, const std::string& name) {
  absl::StatusOr<std::string> cert = core::ReadFile(Path(data_dir, name + ".pem"));
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = core::ReadFile(Path(data_dir, name + "-key.pem"));
  if (!key.ok()) return key.status();
  return security::PemPair{*cert, *key};
}

absl::StatusOr<std::string> RandomToken() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  std::string bytes(32, '\0');
  if (!urandom.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return absl::UnavailableError("cannot read /dev/urandom");
  }
  return absl::StrCat("aot_", absl::BytesToHexString(bytes));
}

bool ValidTenant(const std::string& tenant) {
  if (tenant.empty() || tenant.size() > 64) return false;
  for (char c : tenant) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

absl::Status AppendTokenHash(const std::string& data_dir, const std::string& token, const std::string& tenant,
                             const std::string& role) {
  const std::string path = Path(data_dir, "tokens.yaml");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path));
  std::string line = absl::StrFormat("  - {sha256: %s, tenant: %s, role: %s}\n", core::Sha256Hex(token), tenant, role);
  bool ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  return ok ? absl::OkStatus() : absl::UnavailableError(absl::StrCat("cannot append to ", path));
}

}  // namespace

std::string SecureDir(const std::string& data_dir) { return data_dir + "/tls"; }

bool IsSecureDataDir(const std::string& data_dir) { return fs::exists(Path(data_dir, "ca.pem")); }

absl::Status EnsureSecureMaterial(const std::string& data_dir, const std::vector<std::string>& service_names) {
  std::error_code ec;
  fs::create_directories(SecureDir(data_dir), ec);
  fs::create_directories(data_dir + "/audit", ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", SecureDir(data_dir), ": ", ec.message()));
  fs::permissions(SecureDir(data_dir), fs::perms::owner_all, ec);
  absl::StatusOr<security::PemPair> ca = LoadPair(data_dir, "ca");
  if (!ca.ok()) {
    ca = security::MakeCertificateAuthority("accelopt local cluster CA", kValidity);
    if (!ca.ok()) return ca.status();
    if (absl::Status s = WritePair(data_dir, "ca", *ca); !s.ok()) return s;
  }
  std::vector<std::string> identities = service_names;
  identities.push_back(kCliIdentity);
  for (const std::string& name : identities) {
    const std::string file = name == kCliIdentity ? "cli" : name;
    if (fs::exists(Path(data_dir, file + ".pem"))) continue;
    absl::StatusOr<security::PemPair> leaf =
        security::IssueCertificate(*ca, name, {"localhost"}, {"127.0.0.1"}, kValidity);
    if (!leaf.ok()) return leaf.status();
    if (absl::Status s = WritePair(data_dir, file, *leaf); !s.ok()) return s;
  }
  if (!fs::exists(Path(data_dir, "tokens.yaml"))) {
    if (absl::Status s = WritePrivate(Path(data_dir, "tokens.yaml"), "tokens:\n"); !s.ok()) return s;
  }
  if (!fs::exists(Path(data_dir, "admin.token"))) {
    absl::StatusOr<std::string> token = CreateToken(data_dir, "admin", "admin");
    if (!token.ok()) return token.status();
    if (absl::Status s = WritePrivate(Path(data_dir, "admin.token"), *token + "\n"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string SecureServerFields(const std::string& data_dir, const std::string& service, bool internal) {
  return absl::StrFormat(
      ", tls: {cert_file: \"%s\", key_file: \"%s\", ca_file: \"%s\", require_client_cert: %s}"
      ", auth: {token_file: \"%s\", audit_file: \"%s\", identities: [{identity: orchestrator, tenant: cluster, "
      "role: internal}]}",
      Path(data_dir, service + ".pem"), Path(data_dir, service + "-key.pem"), Path(data_dir, "ca.pem"),
      internal ? "true" : "false", Path(data_dir, "tokens.yaml"), absl::StrCat(data_dir, "/audit/", service, ".log"));
}

std::string OrchestratorClientTls(const std::string& data_dir) {
  return absl::StrFormat("client_tls: {cert_file: \"%s\", key_file: \"%s\", ca_file: \"%s\"}\n",
                         Path(data_dir, "orchestrator.pem"), Path(data_dir, "orchestrator-key.pem"),
                         Path(data_dir, "ca.pem"));
}

std::shared_ptr<grpc::ChannelCredentials> ClusterChannelCredentials(const std::string& data_dir) {
  if (!IsSecureDataDir(data_dir)) return grpc::InsecureChannelCredentials();
  v1::TlsConfig tls;
  tls.set_ca_file(Path(data_dir, "ca.pem"));
  tls.set_cert_file(Path(data_dir, "cli.pem"));
  tls.set_key_file(Path(data_dir, "cli-key.pem"));
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = rpc::MakeChannelCredentials(tls);
  // Unreadable material: plaintext, which a TLS server refuses; the caller reports the failed call.
  return credentials.ok() ? *credentials : grpc::InsecureChannelCredentials();
}

absl::StatusOr<std::string> CreateToken(const std::string& data_dir, const std::string& tenant,
                                        const std::string& role) {
  if (!ValidTenant(tenant)) {
    return absl::InvalidArgumentError("--tenant: 1 to 64 letters, digits, '-', '_' or '.'");
  }
  absl::StatusOr<security::Role> parsed = security::ParseRole(role);
  if (!parsed.ok() || *parsed == security::Role::kInternal) {
    return absl::InvalidArgumentError("--role: viewer, submitter or admin");
  }
  if (!fs::exists(Path(data_dir, "tokens.yaml"))) {
    return absl::FailedPreconditionError(
        absl::StrCat("no token file in ", SecureDir(data_dir), " (start the cluster with `accelopt up --secure`)"));
  }
  absl::StatusOr<std::string> token = RandomToken();
  if (!token.ok()) return token.status();
  if (absl::Status s = AppendTokenHash(data_dir, *token, tenant, role); !s.ok()) return s;
  return token;
}

}  // namespace accelopt::cli

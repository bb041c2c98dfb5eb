#include "cli/client_credentials.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cli/secure_cluster.h"
#include "libs/core/file.h"
#include "libs/rpc/tls_credentials.h"

namespace accelopt::cli {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// The option, else the environment variable, else `fallback`.
std::string OptionEnvOr(const Args& args, const std::string& option, const char* env, const std::string& fallback) {
  if (std::string value = args.Get(option); !value.empty()) return value;
  if (std::string value = Env(env); !value.empty()) return value;
  return fallback;
}

}  // namespace

const std::set<std::string>& ConnectionOptions() {
  static const std::set<std::string> options = {"token", "ca", "cert", "key"};
  return options;
}

std::string ServerOption(const Args& args) { return OptionEnvOr(args, "server", "ACCELOPT_SERVER", ""); }

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(const Args& args,
                                                                            const std::string& data_dir) {
  const bool secure_dir = IsSecureDataDir(data_dir);
  const std::string dir = SecureDir(data_dir);
  v1::TlsConfig tls;
  tls.set_ca_file(OptionEnvOr(args, "ca", "ACCELOPT_CA", secure_dir ? dir + "/ca.pem" : ""));
  if (args.Get("cert").empty() != args.Get("key").empty()) {
    return absl::InvalidArgumentError("--cert and --key go together");
  }
  if (!args.Get("cert").empty()) {
    tls.set_cert_file(args.Get("cert"));
    tls.set_key_file(args.Get("key"));
  } else if (secure_dir) {
    tls.set_cert_file(dir + "/cli.pem");
    tls.set_key_file(dir + "/cli-key.pem");
  }
  std::string token = OptionEnvOr(args, "token", "ACCELOPT_TOKEN", "");
  if (token.empty() && secure_dir) {
    absl::StatusOr<std::string> saved = core::ReadFile(dir + "/admin.token");
    if (saved.ok()) token = std::string(absl::StripAsciiWhitespace(*saved));
  }
  if (tls.ca_file().empty() && tls.cert_file().empty()) {
    if (!token.empty()) {
      return absl::InvalidArgumentError(
          "a bearer token is sent only over TLS: pass --ca FILE (or set ACCELOPT_CA) to verify the server");
    }
    return grpc::InsecureChannelCredentials();
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> channel = rpc::MakeChannelCredentials(tls);
  if (!channel.ok()) return absl::InvalidArgumentError(channel.status().message());
  if (token.empty()) return channel;
  return grpc::CompositeChannelCredentials(*channel, grpc::AccessTokenCredentials(token));
}

}  // namespace accelopt::cli

#include "cli/health_command.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/client_credentials.h"
#include "cli/json_output.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace accelopt::cli {
namespace {

int RunHealth(const std::vector<std::string>& argv) {
  std::set<std::string> with_value = {"server", "service", "timeout", "tls-server-name", "data-dir"};
  with_value.insert(ConnectionOptions().begin(), ConnectionOptions().end());
  auto args = ParseArgs(argv, with_value, {"json"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  const std::string address = ServerOption(*args);
  if (address.empty()) return UsageError("health needs --server ADDR (or $ACCELOPT_SERVER)");
  double timeout_seconds = 2;
  if (!args->Get("timeout").empty() &&
      (!absl::SimpleAtod(args->Get("timeout"), &timeout_seconds) || timeout_seconds <= 0 || timeout_seconds > 60)) {
    return UsageError("--timeout: expected seconds from 0 to 60");
  }
  auto credentials = ClientCredentials(*args, args->Get("data-dir", "./.accelopt"));
  if (absl::IsInvalidArgument(credentials.status())) return UsageError(std::string(credentials.status().message()));
  if (!credentials.ok()) return Fail(std::string(credentials.status().message()));
  grpc::ChannelArguments channel_args;
  // Probes dial 127.0.0.1 while the certificate names the Service: check it against that name instead.
  if (std::string name = args->Get("tls-server-name"); !name.empty()) channel_args.SetSslTargetNameOverride(name);
  auto channel = grpc::CreateCustomChannel(address, *credentials, channel_args);

  const std::string service = args->Get("service");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = grpc::health::v1::Health::NewStub(channel)->Check(&context, request, &response);
  const bool serving = status.ok() && response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  const std::string state =
      status.ok() ? grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) : "UNREACHABLE";
  if (args->Has("json")) {
    std::cout << JsonText({{"server", address},
                           {"service", service},
                           {"status", state},
                           {"error", status.ok() ? "" : status.error_message()}},
                          /*pretty=*/false)
              << "\n";
    return serving ? 0 : 1;
  }
  if (serving) {
    std::cout << "SERVING\n";
    return 0;
  }
  const std::string what = absl::StrCat(address, " health '", service, "'");
  return Fail(status.ok() ? absl::StrCat(what, ": ", state) : absl::StrCat(what, ": ", status.error_message()));
}

}  // namespace

Command HealthCommand() {
  return {"health",
          "health --server ADDR [--service NAME] [--timeout S] [--tls-server-name NAME] [--json]\n"
          "       [--ca FILE] [--cert FILE --key FILE]\n"
          "      One grpc.health.v1 check of NAME (\"liveness\", or empty for readiness; default empty), over TLS\n"
          "      when a CA is given (--tls-server-name: the name the certificate must carry when dialling an\n"
          "      IP, e.g. 127.0.0.1 in a probe). Exit 0 when SERVING, 1 otherwise (one line saying why).",
          RunHealth};
}

}  // namespace accelopt::cli

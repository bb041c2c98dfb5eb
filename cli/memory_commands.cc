#include "cli/memory_commands.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "accelopt/v1/memory_service.grpc.pb.h"
#include "cli/args.h"
#include "cli/client_credentials.h"
#include "cli/json_output.h"
#include "cli/local_cluster.h"
#include "libs/core/file.h"
#include "services/memory/experience_jsonl.h"

namespace accelopt::cli {
namespace {

constexpr char kDefaultAddress[] = "127.0.0.1:50053";
constexpr auto kDeadline = std::chrono::seconds(120);

// `args` were checked by ParseMemoryArgs, so their credentials resolve.
std::unique_ptr<v1::MemoryService::Stub> Connect(const std::string& address, const Args& args) {
  grpc::ChannelArguments channel_args;
  // List and export answers may be as large as the service's answer limit.
  channel_args.SetMaxReceiveMessageSize(static_cast<int>(memory::kMaxExportBytes + (1 << 20)));
  channel_args.SetMaxSendMessageSize(static_cast<int>(memory::kMaxImportBytes + (1 << 20)));
  auto credentials = ClientCredentials(args, args.Get("data-dir", "./.accelopt"));
  return v1::MemoryService::NewStub(grpc::CreateCustomChannel(
      address, credentials.ok() ? *credentials : grpc::InsecureChannelCredentials(), channel_args));
}

void SetDeadline(grpc::ClientContext* context) { context->set_deadline(std::chrono::system_clock::now() + kDeadline); }

// One line for a failed call: unreachable services are named as such.
int RpcFailure(const std::string& address, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return Fail(absl::StrCat("cannot reach the memory service at ", address, ": ", status.error_message()));
  }
  return Fail(absl::StrCat("memory service at ", address, ": ", status.error_message()));
}

// Parses the options shared by every verb plus `with_value` / `booleans`, and resolves the address.
absl::StatusOr<Args> ParseMemoryArgs(const std::vector<std::string>& argv, std::set<std::string> with_value,
                                     const std::set<std::string>& booleans, std::string* address) {
  with_value.insert({"server", "data-dir"});
  with_value.insert(ConnectionOptions().begin(), ConnectionOptions().end());
  auto args = ParseArgs(argv, with_value, booleans);
  if (!args.ok()) return args.status();
  if (auto credentials = ClientCredentials(*args, args->Get("data-dir", "./.accelopt")); !credentials.ok()) {
    return credentials.status();
  }
  auto resolved =
      ClusterServiceAddress(args->Get("server"), args->Get("data-dir", "./.accelopt"), "memory", kDefaultAddress);
  if (!resolved.ok()) return resolved.status();
  *address = *resolved;
  return args;
}

std::string Shorten(const std::string& text, size_t width) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() <= width ? line : absl::StrCat(line.substr(0, width - 3), "...");
}

void PrintTable(const v1::ListExperiencesResponse& listed, std::ostream& out) {
  if (listed.experiences().empty()) {
    out << "no experiences stored\n";
    return;
  }
  out << absl::StrFormat("%-24s %6s %8s %-10s %-28s %s\n", "NAMESPACE", "SEQ", "SPEEDUP", "KIND", "ID", "TITLE");
  for (const v1::Experience& e : listed.experiences()) {
    out << absl::StrFormat("%-24s %6d %7.3fx %-10s %-28s %s\n", Shorten(e.namespace_(), 24), e.sequence(), e.speedup(),
                           e.regression() ? "regression" : "gain", e.id(), Shorten(e.title(), 60));
  }
  out << listed.experiences_size() << " experience" << (listed.experiences_size() == 1 ? "" : "s") << "\n";
}

int RunList(const std::vector<std::string>& argv) {
  std::string address;
  auto args = ParseMemoryArgs(argv, {"namespace"}, {"json"}, &address);
  if (absl::IsInvalidArgument(args.status())) return UsageError(std::string(args.status().message()));
  if (!args.ok()) return Fail(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  v1::ListExperiencesRequest request;
  request.set_namespace_(args->Get("namespace"));
  v1::ListExperiencesResponse response;
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::Status status = Connect(address, *args)->ListExperiences(&context, request, &response);
  if (!status.ok()) return RpcFailure(address, status);
  if (args->Has("json")) {
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;
    options.add_whitespace = true;
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(response, &json, options);
    std::cout << json;
    if (json.empty() || json.back() != '\n') std::cout << "\n";
    return 0;
  }
  PrintTable(response, std::cout);
  return 0;
}

int RunExport(const std::vector<std::string>& argv) {
  std::string address;
  auto args = ParseMemoryArgs(argv, {"namespace", "out"}, {"json"}, &address);
  if (absl::IsInvalidArgument(args.status())) return UsageError(std::string(args.status().message()));
  if (!args.ok()) return Fail(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  std::string out = args->Get("out");
  if (out.empty()) return UsageError("memory export needs --out FILE");
  v1::ExportExperiencesRequest request;
  request.set_namespace_(args->Get("namespace"));
  v1::ExportExperiencesResponse response;
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::Status status = Connect(address, *args)->ExportExperiences(&context, request, &response);
  if (!status.ok()) return RpcFailure(address, status);
  if (auto s = core::WriteFileAtomic(out, response.jsonl()); !s.ok()) return Fail(std::string(s.message()));
  if (args->Has("json")) {
    std::cout << JsonText({{"exported", response.count()}, {"file", out}}, /*pretty=*/false) << "\n";
    return 0;
  }
  std::cout << "exported " << response.count() << " experience" << (response.count() == 1 ? "" : "s") << " to " << out
            << "\n";
  return 0;
}

int RunImport(const std::vector<std::string>& argv) {
  std::string address;
  auto args = ParseMemoryArgs(argv, {}, {"json"}, &address);
  if (absl::IsInvalidArgument(args.status())) return UsageError(std::string(args.status().message()));
  if (!args.ok()) return Fail(std::string(args.status().message()));
  if (args->positional.size() != 1) return UsageError("memory import needs exactly one FILE");
  const std::string& path = args->positional[0];
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return Fail(absl::StrCat("cannot read ", path, ": ", ec.message()));
  if (size > memory::kMaxImportBytes) {
    return Fail(absl::StrCat(path, " is ", size, " bytes, over the import limit of ", memory::kMaxImportBytes,
                             " bytes (8 MiB); split it into smaller files"));
  }
  auto text = core::ReadFile(path);
  if (!text.ok()) return Fail(std::string(text.status().message()));
  v1::ImportExperiencesRequest request;
  request.set_jsonl(*text);
  v1::ImportExperiencesResponse response;
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::Status status = Connect(address, *args)->ImportExperiences(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    return Fail(absl::StrCat(path, ": ", status.error_message(), " (nothing imported)"));
  }
  if (!status.ok()) return RpcFailure(address, status);
  if (args->Has("json")) {
    std::cout << JsonText({{"imported", response.imported()}, {"skipped", response.skipped()}}, /*pretty=*/false)
              << "\n";
    return 0;
  }
  std::cout << "imported " << response.imported() << " experience" << (response.imported() == 1 ? "" : "s")
            << ", skipped " << response.skipped() << " already stored\n";
  return 0;
}

int RunMemory(const std::vector<std::string>& argv) {
  if (argv.empty()) return UsageError("memory needs a verb: list, export or import");
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "list") return RunList(rest);
  if (argv[0] == "export") return RunExport(rest);
  if (argv[0] == "import") return RunImport(rest);
  return UsageError("unknown memory verb '" + argv[0] + "' (list, export or import)");
}

}  // namespace

Command MemoryCommand() {
  return {"memory",
          "memory list [--namespace NS] [--json] [--server ADDR] [--data-dir DIR]\n"
          "      Stored experiences (every namespace when none is named): a table, or JSON {\"experiences\": [...]}.\n"
          "  memory export --out FILE [--namespace NS] [--json] [--server ADDR] [--data-dir DIR]\n"
          "      Write the experiences as JSON Lines (one accelopt.v1.Experience per line).\n"
          "  memory import FILE [--json] [--server ADDR] [--data-dir DIR]\n"
          "      Store the experiences of a JSON Lines file, all or nothing; ids already stored are skipped.\n"
          "      ADDR defaults to the memory service of the local cluster in DIR, else 127.0.0.1:50053.",
          RunMemory};
}

}  // namespace accelopt::cli

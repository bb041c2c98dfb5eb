#include "cli/report_command.h"

#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/job_commands.h"
#include "cli/json_output.h"
#include "libs/core/file.h"

namespace accelopt::cli {
namespace {

int RunReport(const std::vector<std::string>& argv) {
  return WithJobService(argv, {"out"}, {"json"}, 1, "JOB",
                        [](const Args& args, v1::JobService::Stub& stub, const std::string& address) {
                          const std::string out = args.Get("out", ".");
                          grpc::ClientContext context;
                          SetJobDeadline(&context);
                          v1::GetJobReportRequest request;
                          request.set_job_id(args.positional[0]);
                          v1::JobReport report;
                          if (grpc::Status s = stub.GetJobReport(&context, request, &report); !s.ok())
                            return JobRpcFailure(address, s);
                          std::error_code ec;
                          std::filesystem::create_directories(out, ec);
                          if (ec) return Fail(absl::StrCat("cannot create ", out, ": ", ec.message()));
                          const std::string path = (std::filesystem::path(out) / "report.html").string();
                          if (absl::Status s = core::WriteFileAtomic(path, report.html()); !s.ok())
                            return Fail(std::string(s.message()));
                          const std::string absolute = std::filesystem::absolute(path).lexically_normal().string();
                          if (args.Has("json")) {
                            std::cout << JsonText({{"job_id", args.positional[0]}, {"path", absolute}},
                                                  /*pretty=*/false)
                                      << "\n";
                          } else {
                            std::cout << absolute << "\n";
                          }
                          return 0;
                        });
}

}  // namespace

Command ReportCommand() {
  return {"report",
          "report JOB [--out DIR] [--json] [--server ADDR] [--data-dir DIR]\n"
          "      Write the job's self-contained HTML report (charts, candidate tree, kernel diff) to DIR/report.html\n"
          "      (DIR defaults to .) and print its absolute path.",
          RunReport};
}

}  // namespace accelopt::cli

#include "cli/job_export.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "cli/job_json.h"
#include "cli/json_output.h"
#include "libs/core/file.h"

namespace accelopt::cli {

absl::StatusOr<std::vector<std::string>> WriteJobExport(const v1::JobReport& report, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  struct Output {
    std::string name, contents;
  };
  std::vector<Output> files = {{"report.md", report.markdown()},
                               {"report.html", report.html()},
                               {"lineage.json", JsonText(LineageJson(report), /*pretty=*/true) + "\n"},
                               {"job.json", JsonText(JobJson(report.job()), /*pretty=*/true) + "\n"}};
  if (report.has_best()) files.push_back({"best_kernel.py", report.best().kernel().source()});
  std::vector<std::string> written;
  for (const Output& f : files) {
    const std::string path = (fs::path(dir) / f.name).string();
    if (absl::Status s = core::WriteFileAtomic(path, f.contents); !s.ok()) return s;
    written.push_back(path);
  }
  return written;
}

}  // namespace accelopt::cli

// The files of `accelopt export JOB --out DIR`, written from the job's report.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/job_service.pb.h"

namespace accelopt::cli {

// Writes report.md, report.html (GetJobReport's page), lineage.json, job.json (both from cli/job_json.h, keys sorted)
// and, when the job has a best candidate, best_kernel.py into `dir` (created when missing). The same report always
// gives byte-identical files. Returns the paths written, in that order; the error names the file or directory.
absl::StatusOr<std::vector<std::string>> WriteJobExport(const v1::JobReport& report, const std::string& dir);

}  // namespace accelopt::cli

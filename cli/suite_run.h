// `accelopt suite run`: submits a suite's problems as jobs, at most `concurrency` in flight, follows them to
// the end and writes results.md, results.json and report.html into the output directory.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "accelopt/v1/job_service.grpc.pb.h"
#include "cli/suite_file.h"

namespace accelopt::cli {

// Resumable: the job id of every submitted problem is kept in <out_dir>/state.json, written before the next
// submission, and each submission carries the idempotency key "suite/<name>/<problem>/<out_dir>", so a run that
// is interrupted and started again follows the jobs it already has instead of submitting them twice. Progress
// goes to `log` one line per event, flushed. `poll_seconds` is the interval between status checks. When every
// job has finished the results are written; ABORTED naming them when a problem's job did not succeed.
absl::Status RunSuite(const Suite& suite, const std::string& out_dir, v1::JobService::Stub& stub, std::ostream& log,
                      double poll_seconds = 1.0);

}  // namespace accelopt::cli

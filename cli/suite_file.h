// A suite file: many problems run as jobs with one command (`accelopt suite run SUITE.yaml`).
//
//   name: examples            # defaults to the file's stem
//   concurrency: 2            # jobs in flight at once (default 2)
//   overrides:                # optional, merged into every job spec (e.g. another model or preset)
//     search: {iterations: 2}
//   problems:
//     - softmax/job.yaml      # a job file, relative to the suite file; named after its directory
//     - {name: silu, job: silu/job.yaml}
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/job.pb.h"

namespace accelopt::cli {

struct SuiteProblem {
  std::string name;
  v1::JobSpec spec;  // the job file with the suite's overrides applied
};

struct Suite {
  std::string name;
  int concurrency = 2;
  std::vector<SuiteProblem> problems;
};

// Loads the suite and every job file it names. Errors name the suite file and the entry (duplicate problem
// names, unreadable job files, bad overrides, concurrency < 1).
absl::StatusOr<Suite> LoadSuiteFile(const std::string& path);

}  // namespace accelopt::cli

// `accelopt candidates JOB`: a job's candidates as a table, or as JSON with --json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accelopt/v1/job.pb.h"
#include "cli/command.h"

namespace accelopt::cli {

Command CandidatesCommand();

// One row per candidate, in the order given: id, iteration, parent, verdict, latency, speedups, % of peak, plan
// title. Columns are padded to their widest cell.
std::string CandidatesTable(const std::vector<v1::Candidate>& candidates);

// A JSON array with one object per candidate (sorted keys, no kernel sources).
nlohmann::json CandidatesJson(const std::vector<v1::Candidate>& candidates);

}  // namespace accelopt::cli

// `accelopt suite import-nkibench PATH`: turns an NKIBench checkout (the NKIBench/ folder of the public AccelOpt
// repository: summary.json, reference/, kernels/) into a suite of job files.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accelopt::cli {

struct NkiBenchImport {
  std::string suite_path;             // <out_dir>/suite.yaml
  std::vector<std::string> problems;  // "<problem>_<case>", in suite order
  std::vector<std::string> warnings;  // e.g. a problem without roofline formulas
};

// Reads <nkibench_dir>/summary.json and writes, per problem case and implementation, <out_dir>/<name>/problem.yaml
// (parameters from the case's values; roofline terms as arithmetic over them, per accelopt-algorithm.md §4.5,
// fp32) and <out_dir>/<name>/job.yaml (absolute paths to the reference and kernel, `device`, the builtin
// optimizer), and <out_dir>/suite.yaml listing them. Errors name the file and the entry.
absl::StatusOr<NkiBenchImport> ImportNkiBench(const std::string& nkibench_dir, const std::string& out_dir,
                                              const std::string& device);

// The §4.5 roofline of a NKIBench problem as expressions {vector_flops, matmul_flops, hbm_bytes}; empty for an
// unknown problem.
std::vector<std::string> NkiBenchRoofline(const std::string& problem);

}  // namespace accelopt::cli

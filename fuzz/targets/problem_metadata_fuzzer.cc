// problem.yaml text through cli::ParseProblemMetadata.
#include <cstddef>
#include <cstdint>
#include <string>

#include "accelopt/v1/common.pb.h"
#include "cli/job_spec_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  accelopt::v1::Problem problem;
  absl::Status status = accelopt::cli::ParseProblemMetadata(text, "problem.metadata", &problem);
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
  return 0;
}

// Job spec text (YAML or JSON) through the loader's text level: config::ParseConfigTextWithExtraKeys onto
// JobSpec with the file keys of cli/job_spec_file.cc.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "accelopt/v1/job.pb.h"
#include "libs/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  accelopt::v1::JobSpec spec;
  auto paths = accelopt::config::ParseConfigTextWithExtraKeys(
      text, "job.yaml", {"problem.reference", "problem.kernel", "problem.metadata"}, &spec);
  if (paths.ok()) {
    // A parsed spec must serialize and read back.
    std::string wire;
    if (!spec.SerializeToString(&wire)) __builtin_trap();
    accelopt::v1::JobSpec again;
    if (!again.ParseFromString(wire)) __builtin_trap();
  }
  return 0;
}

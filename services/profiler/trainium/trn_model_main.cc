// accelopt-trn-model: runs the Trainium timing model on one instruction trace and prints the
// result.
//
//   accelopt-trn-model --trace FILE [--device trn1|trn2 | --device-file YAML]
//                      [--vector-flops X --matmul-flops Y --hbm-bytes Z] [--json]
//
// Exit status: 0 on success, 1 when the trace or device file is invalid, 2 on bad usage.
#include <cstdio>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "services/profiler/trainium/device_params.h"
#include "services/profiler/trainium/timing_model.h"
#include "services/profiler/trainium/trace_reader.h"

namespace {

constexpr char kUsage[] =
    "usage: accelopt-trn-model --trace FILE [--device trn1|trn2 | --device-file YAML]\n"
    "                          [--vector-flops X] [--matmul-flops Y] [--hbm-bytes Z] [--json]\n"
    "\n"
    "Schedules an instruction trace (services/profiler/trainium/TRACE_FORMAT.md) on a modelled "
    "NeuronCore and\n"
    "prints latency, the neuron-profile counters and engine activity.\n"
    "\n"
    "  --trace FILE        trace written by the simulator front end (required)\n"
    "  --device NAME       built-in device parameters: trn1 (default) or trn2\n"
    "  --device-file YAML  device parameters from a file instead (same format as "
    "devices/trn1.yaml)\n"
    "  --vector-flops X    roofline terms of the problem (accelopt-algorithm.md 4.5); when any is "
    "given the\n"
    "  --matmul-flops Y    result includes percent of peak and its bound\n"
    "  --hbm-bytes Z\n"
    "  --json              print one JSON object instead of text\n"
    "  --help              print this help\n";

struct Options {
  std::string trace;
  std::string device = "trn1";
  std::string device_file;
  std::optional<accelopt::trainium::RooflineTerms> roofline;
  bool json = false;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "accelopt-trn-model: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

// Parses argv into `options`; returns an exit code (-1 to continue).
int ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); absl::StartsWith(arg, "--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--json") {
      options->json = true;
      continue;
    }
    if (arg != "--trace" && arg != "--device" && arg != "--device-file" && arg != "--vector-flops" &&
        arg != "--matmul-flops" && arg != "--hbm-bytes") {
      return UsageError("unknown argument '" + arg + "'");
    }
    if (!has_value) {
      if (i + 1 >= argc) return UsageError(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--trace") {
      options->trace = value;
    } else if (arg == "--device") {
      options->device = value;
    } else if (arg == "--device-file") {
      options->device_file = value;
    } else {
      double number = 0;
      if (!absl::SimpleAtod(value, &number) || number < 0) {
        return UsageError(arg + " needs a non-negative number, got '" + value + "'");
      }
      if (!options->roofline.has_value()) options->roofline.emplace();
      if (arg == "--vector-flops") options->roofline->vector_flops = number;
      if (arg == "--matmul-flops") options->roofline->matmul_flops = number;
      if (arg == "--hbm-bytes") options->roofline->hbm_bytes = number;
    }
  }
  if (options->trace.empty()) return UsageError("--trace is required");
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (int code = ParseArgs(argc, argv, &options); code >= 0) return code;
  absl::StatusOr<accelopt::trainium::DeviceParams> device =
      options.device_file.empty() ? accelopt::trainium::BuiltinDeviceParams(options.device)
                                  : accelopt::trainium::LoadDeviceParamsFile(options.device_file);
  if (!device.ok()) {
    std::fprintf(stderr, "accelopt-trn-model: %s\n", std::string(device.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<accelopt::trainium::Trace> trace = accelopt::trainium::ReadTraceFile(options.trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "accelopt-trn-model: %s\n", std::string(trace.status().message()).c_str());
    return 1;
  }
  const accelopt::trainium::TimingResult result = accelopt::trainium::RunTimingModel(*trace, *device, options.roofline);
  const std::string out = options.json ? accelopt::trainium::ToJson(result) + "\n" : accelopt::trainium::ToText(result);
  std::fputs(out.c_str(), stdout);
  return 0;
}

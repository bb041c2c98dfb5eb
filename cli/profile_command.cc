#include "cli/profile_command.h"

#include <grpcpp/create_channel.h>

#include <filesystem>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "accelopt/v1/profiler_service.grpc.pb.h"
#include "cli/args.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "libs/core/enum_name.h"
#include "libs/core/file.h"
#include "libs/core/sha256.h"
#include "libs/sandbox/worker_sandbox.h"
#include "services/profiler/kernel_profiler.h"
#include "services/profiler/profiler_config.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Struct;
using google::protobuf::Value;

std::string BoundName(v1::Bound b) {
  switch (b) {
    case v1::BOUND_MEMORY:
      return "memory";
    case v1::BOUND_MATMUL:
      return "matmul";
    case v1::BOUND_VECTOR:
      return "vector";
    default:
      return "";
  }
}

Value Number(double d) {
  Value v;
  v.set_number_value(d);
  return v;
}

Value Text(const std::string& s) {
  Value v;
  v.set_string_value(s);
  return v;
}

absl::StatusOr<v1::Problem> LoadProblem(const std::string& reference, const std::string& metadata) {
  auto source = core::ReadFile(reference);
  if (!source.ok()) return source.status();
  v1::Problem problem;
  problem.set_reference_source(*source);
  problem.set_reference_filename(fs::path(reference).filename().string());
  if (!metadata.empty()) {
    auto meta = core::ReadFile(metadata);
    if (!meta.ok()) return meta.status();
    problem.set_metadata_yaml(*meta);
  } else {
    // The harness's own lookup: reference_small.py -> reference_small.yaml, problem_small.yaml, problem.yaml.
    fs::path dir = fs::path(reference).parent_path();
    std::string stem = fs::path(reference).stem().string();
    std::string problem_stem = stem;
    if (auto pos = problem_stem.find("reference"); pos != std::string::npos) problem_stem.replace(pos, 9, "problem");
    for (const std::string& name : {stem + ".yaml", problem_stem + ".yaml", std::string("problem.yaml")}) {
      if (auto meta = core::ReadFile((dir / name).string()); meta.ok()) {
        problem.set_metadata_yaml(*meta);
        break;
      }
    }
  }
  problem.set_name(fs::path(reference).stem().string());
  return problem;
}

void PrintHuman(const v1::ProfileResult& r, std::ostream& out) {
  out << "verdict: " << core::ShortEnumName(r.verdict());
  if (!r.message().empty()) out << " — " << r.message();
  out << "\n";
  if (r.verdict() != v1::VERDICT_OK) return;
  out << absl::StrFormat("latency: %.4f ms on %s (%d seeds checked, max rel L2 %.3g)\n", r.latency().mean_ms(),
                         profiler::DeviceName(r.device()), r.seeds_checked(), r.max_rel_l2());
  if (r.has_peak_percent()) {
    out << absl::StrFormat("peak: %.1f%% of the %s-bound roofline\n", r.peak_percent(), BoundName(r.bound()));
  }
  const auto& e = r.engine_active();
  out << absl::StrFormat("engines active: pe %.0f%%  act %.0f%%  dve %.0f%%  pool %.0f%%  dma %.0f%%\n", 100 * e.pe(),
                         100 * e.act(), 100 * e.dve(), 100 * e.pool(), 100 * e.dma());
  out << absl::StrFormat("hbm: %.1f MB read, %.1f MB written; %lld instructions simulated\n",
                         r.counters().hbm_read_bytes() / 1e6, r.counters().hbm_write_bytes() / 1e6,
                         static_cast<long long>(r.instructions()));
}

int Run(const std::vector<std::string>& argv) {
  auto args = ParseArgs(argv, {"problem", "kernel", "metadata", "device", "seeds", "server", "timeout"},
                        {"timing-only", "json", "ban-low-precision"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (!args->positional.empty()) return UsageError("unexpected argument '" + args->positional[0] + "'");
  if (args->Get("problem").empty() || args->Get("kernel").empty()) {
    return UsageError("profile needs --problem REF.py and --kernel KERNEL.py");
  }
  v1::ProfileRequest request;
  auto problem = LoadProblem(args->Get("problem"), args->Get("metadata"));
  if (!problem.ok()) return Fail(std::string(problem.status().message()));
  *request.mutable_problem() = *problem;
  auto kernel = core::ReadFile(args->Get("kernel"));
  if (!kernel.ok()) return Fail(std::string(kernel.status().message()));
  request.mutable_kernel()->set_source(*kernel);
  request.mutable_kernel()->set_sha256(core::Sha256Hex(*kernel));
  std::optional<v1::Device> device = profiler::ParseDeviceName(args->Get("device", "sim-trn1"));
  if (!device.has_value()) return UsageError("--device must be sim-trn1, sim-trn2 or neuron");
  request.set_device(*device);
  if (args->values.count("seeds")) {
    int seeds = 0;
    if (!absl::SimpleAtoi(args->Get("seeds"), &seeds) || seeds < 1 || seeds > 32) {
      return UsageError("--seeds must be a number from 1 to 32");
    }
    request.mutable_options()->set_seeds(seeds);
  }
  if (args->values.count("timeout")) {
    double t = 0;
    if (!absl::SimpleAtod(args->Get("timeout"), &t) || t <= 0) return UsageError("--timeout must be positive seconds");
    request.mutable_options()->set_timeout_seconds(t);
  }
  request.mutable_options()->set_timing_only(args->Has("timing-only"));
  request.mutable_options()->set_ban_low_precision(args->Has("ban-low-precision"));

  v1::ProfileResult result;
  if (std::string server = args->Get("server"); !server.empty()) {
    auto stub = v1::ProfilerService::NewStub(grpc::CreateChannel(server, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::ProfileResponse response;
    grpc::Status s = stub->Profile(&ctx, request, &response);
    if (!s.ok()) return Fail(absl::StrCat("profiler at ", server, ": ", s.error_message()));
    result = response.result();
  } else {
    if (request.device() == v1::DEVICE_NEURON) return Fail("--device neuron needs --server (a worker on a Trn host)");
    v1::ProfilerConfig config;
    config.set_device(request.device());
    profiler::ApplyProfilerDefaults(&config);
    profiler::KernelProfilerOptions options;
    options.device = request.device();
    options.harness_dir = profiler::DefaultHarnessDir();
    options.limits = profiler::SandboxLimitsFromConfig(config.sandbox());
    options.default_timeout_seconds = config.default_timeout_seconds();
    options.worker_name = "local";
    auto worker_sandbox = sandbox::PrepareWorkerSandbox(options.harness_dir, options.scratch_root, 0, 1);
    if (!worker_sandbox.ok()) return Fail(std::string(worker_sandbox.status().message()));
    options.harness_dir = worker_sandbox->harness.path();
    options.sandbox_uid_base = worker_sandbox->uids.base();
    result = profiler::KernelProfiler(options).Profile(request.kernel(), request.problem(), request.options(),
                                                       /*slot=*/0, nullptr);
  }
  if (args->Has("json")) {
    std::cout << ProfileResultJson(result) << "\n";
  } else {
    PrintHuman(result, std::cout);
  }
  return result.verdict() == v1::VERDICT_OK ? 0 : 1;
}

}  // namespace

std::string ProfileResultJson(const v1::ProfileResult& r) {
  Struct root;
  auto& f = *root.mutable_fields();
  f["verdict"] = Text(core::ShortEnumName(r.verdict()));
  f["message"] = Text(r.message());
  f["line"] = Number(r.line());
  f["device"] = Text(profiler::DeviceName(r.device()));
  f["seeds_checked"] = Number(r.seeds_checked());
  f["max_rel_l2"] = Number(r.max_rel_l2());
  f["instructions"] = Number(static_cast<double>(r.instructions()));
  f["device_seconds"] = Number(r.device_seconds());
  if (r.verdict() == v1::VERDICT_OK && r.has_latency()) {
    f["latency_ms"] = Number(r.latency().mean_ms());
    Struct counters;
    const auto* desc = r.counters().GetDescriptor();
    const auto* refl = r.counters().GetReflection();
    for (int i = 0; i < desc->field_count(); ++i) {
      const auto* field = desc->field(i);
      if (refl->HasField(r.counters(), field)) {
        (*counters.mutable_fields())[field->name()] = Number(refl->GetDouble(r.counters(), field));
      }
    }
    *f["counters"].mutable_struct_value() = counters;
    Struct engines;
    const auto& e = r.engine_active();
    for (auto [name, value] :
         {std::pair{"pe", e.pe()}, {"act", e.act()}, {"dve", e.dve()}, {"pool", e.pool()}, {"dma", e.dma()}}) {
      (*engines.mutable_fields())[name] = Number(value);
    }
    *f["engine_active"].mutable_struct_value() = engines;
  }
  if (r.has_peak_percent()) {
    f["peak_percent"] = Number(r.peak_percent());
    f["bound"] = Text(BoundName(r.bound()));
  }
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(root, &json);
  return json;
}

Command ProfileCommand() {
  return {"profile",
          "profile --problem REF.py --kernel KERNEL.py [--metadata problem.yaml] [--device sim-trn1|sim-trn2|neuron]\n"
          "        [--seeds N] [--timing-only] [--ban-low-precision] [--timeout S] [--json] [--server ADDR]\n"
          "      Check and time one kernel (locally in the sandbox, or on the worker at ADDR).\n"
          "      Exit 0 when the verdict is OK, 1 otherwise.",
          Run};
}

}  // namespace accelopt::cli

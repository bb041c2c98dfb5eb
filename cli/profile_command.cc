#include "cli/profile_command.h"

#include <grpcpp/create_channel.h>

#include <filesystem>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "accelopt/v1/profiler_service.grpc.pb.h"
#include "cli/args.h"
#include "cli/json_output.h"
#include "libs/core/enum_name.h"
#include "libs/core/file.h"
#include "libs/core/sha256.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/profiler_config.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

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
  out << absl::StrFormat("latency: %.4f ms on %s (%d seeds checked, max rel L2 %.3g%s)\n", r.latency().mean_ms(),
                         profiler::BuiltinBackends().Name(r.device()), r.seeds_checked(), r.max_rel_l2(),
                         r.has_fresh_rel_l2() ? absl::StrFormat("; fresh inputs %.3g", r.fresh_rel_l2()) : "");
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
  const std::string device_name = args->Get("device", "sim-trn1");
  auto device = profiler::BuiltinBackends().ParseDevice(device_name);
  if (!device.ok()) return UsageError(absl::StrCat("--device: ", device.status().message()));
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
    v1::ProfilerConfig config;
    config.set_device(request.device());
    profiler::ApplyProfilerDefaults(&config);
    auto kernel_profiler = profiler::NewKernelProfiler(config, profiler::BuiltinBackends(), "local");
    if (!kernel_profiler.ok()) {
      return Fail(absl::StrCat("--device ", device_name, " cannot run here (", kernel_profiler.status().message(),
                               "); use --server ADDR of a worker that can"));
    }
    result = (*kernel_profiler)->Profile(request.kernel(), request.problem(), request.options(), /*slot=*/0, nullptr);
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
  nlohmann::json f = {{"verdict", core::ShortEnumName(r.verdict())},
                      {"message", r.message()},
                      {"line", r.line()},
                      {"device", profiler::BuiltinBackends().Name(r.device())},
                      {"seeds_checked", r.seeds_checked()},
                      {"max_rel_l2", r.max_rel_l2()},
                      {"instructions", r.instructions()},
                      {"device_seconds", r.device_seconds()}};
  if (r.has_fresh_rel_l2()) f["fresh_rel_l2"] = r.fresh_rel_l2();
  if (r.verdict() == v1::VERDICT_OK && r.has_latency()) {
    f["latency_ms"] = r.latency().mean_ms();
    nlohmann::json counters = nlohmann::json::object();
    const auto* desc = r.counters().GetDescriptor();
    const auto* refl = r.counters().GetReflection();
    for (int i = 0; i < desc->field_count(); ++i) {
      const auto* field = desc->field(i);
      if (refl->HasField(r.counters(), field)) counters[field->name()] = refl->GetDouble(r.counters(), field);
    }
    f["counters"] = counters;
    const auto& e = r.engine_active();
    f["engine_active"] = {{"pe", e.pe()}, {"act", e.act()}, {"dve", e.dve()}, {"pool", e.pool()}, {"dma", e.dma()}};
  }
  if (r.has_peak_percent()) {
    f["peak_percent"] = r.peak_percent();
    f["bound"] = BoundName(r.bound());
  }
  return JsonText(f, /*pretty=*/false);
}

Command ProfileCommand() {
  return {
      "profile",
      absl::StrCat("profile --problem REF.py --kernel KERNEL.py [--metadata problem.yaml] [--device ",
                   absl::StrJoin(profiler::BuiltinBackends().Names(), "|"),
                   "]\n"
                   "        [--seeds N] [--timing-only] [--ban-low-precision] [--timeout S] [--json] [--server ADDR]\n"
                   "      Check and time one kernel (locally in the sandbox, or on the worker at ADDR).\n"
                   "      Exit 0 when the verdict is OK, 1 otherwise."),
      Run};
}

}  // namespace accelopt::cli

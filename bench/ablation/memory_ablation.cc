// Memory ablation: every example problem optimized by the builtin optimizer twice, with the optimization
// memory shown to the planner (FIFO, the paper's policy) and without (MEMORY_POLICY_OFF), same seed, same
// search and budget. Prints a Markdown table of per-problem speedup and percentage of peak for both, and the
// geometric means, so the claim that memory helps is a measurement.
//
// With --shared, the memory arm uses one namespace shared by all problems and runs the problems one after
// another (in the listed order), so each job's planner sees what the earlier problems taught.
//
// Usage: memory_ablation --server HOST:PORT [--shape small|realistic] [--seed N] [--iterations T] [--shared]
#include <grpcpp/create_channel.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "accelopt/v1/job_service.grpc.pb.h"
#include "libs/core/file.h"

namespace {

using namespace accelopt;

const std::vector<std::string> kProblems = {"matmul", "rmsnorm_matmul", "softmax", "silu", "swiglu", "rope", "adamw"};

struct Options {
  std::string server = "127.0.0.1:50050";
  std::string shape = "realistic";
  uint64_t seed = 11;
  int iterations = 4;
  bool shared = false;
};

v1::JobSpec Spec(const Options& o, const std::string& problem, bool memory) {
  const std::string dir = std::string(ACCELOPT_SOURCE_DIR) + "/examples/" + problem + "/";
  const std::string suffix = o.shape == "small" ? "_small" : "";
  v1::JobSpec spec;
  spec.set_name(absl::StrCat("ablation-", problem, memory ? "-memory" : "-no-memory"));
  spec.set_preset("small");
  spec.set_seed(o.seed);
  spec.set_device(v1::DEVICE_SIM_TRN1);
  v1::Problem* p = spec.mutable_problem();
  p->set_name(problem);
  p->set_reference_source(*core::ReadFile(dir + "reference" + suffix + ".py"));
  p->set_reference_filename("reference" + suffix + ".py");
  p->set_metadata_yaml(*core::ReadFile(dir + "problem" + suffix + ".yaml"));
  spec.mutable_baseline()->set_source(*core::ReadFile(dir + "kernel.py"));
  spec.mutable_search()->set_iterations(o.iterations);
  spec.mutable_search()->set_samples_per_plan(1);  // the builtin executor is deterministic
  spec.mutable_search()->set_memory_policy(memory ? v1::MEMORY_POLICY_FIFO : v1::MEMORY_POLICY_OFF);
  if (memory && o.shared) spec.mutable_search()->set_memory_namespace(absl::StrCat("ablation-", o.seed));
  for (v1::ModelSpec* m : {spec.mutable_models()->mutable_planner(), spec.mutable_models()->mutable_executor(),
                           spec.mutable_models()->mutable_summarizer()}) {
    m->set_provider("builtin");
  }
  spec.mutable_profile()->set_seeds(1);
  spec.mutable_profile()->set_timeout_seconds(300);
  spec.mutable_budget()->set_max_wall_seconds(1800);
  return spec;
}

bool Finished(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_SUCCEEDED || job.state() == v1::JOB_STATE_FAILED ||
         job.state() == v1::JOB_STATE_CANCELLED;
}

double GeoMean(const std::vector<double>& values) {
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return values.empty() ? 0 : std::exp(log_sum / values.size());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--shared") {
      o.shared = true;
      --i;
      continue;
    }
    std::string value = i + 1 < argc ? argv[i + 1] : "";
    if (flag == "--server")
      o.server = value;
    else if (flag == "--shape")
      o.shape = value;
    else if (flag == "--seed")
      (void)absl::SimpleAtoi(value, &o.seed);
    else if (flag == "--iterations")
      (void)absl::SimpleAtoi(value, &o.iterations);
    else {
      std::fprintf(stderr,
                   "usage: memory_ablation --server HOST:PORT [--shape small|realistic] [--seed N] "
                   "[--iterations T] [--shared]\n");
      return 2;
    }
  }
  auto stub = v1::JobService::NewStub(grpc::CreateChannel(o.server, grpc::InsecureChannelCredentials()));
  auto submit = [&](const std::string& problem, bool memory) -> absl::StatusOr<std::string> {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = Spec(o, problem, memory);
    v1::SubmitJobResponse response;
    grpc::Status s = stub->SubmitJob(&ctx, request, &response);
    if (!s.ok()) return absl::UnavailableError(absl::StrCat("submit ", problem, ": ", s.error_message()));
    return response.job().job_id();
  };
  std::map<std::pair<std::string, bool>, std::string> ids;
  std::map<std::pair<std::string, bool>, v1::Job> jobs;
  // Polls every submitted job once; returns when `key` (if given) has finished.
  auto poll_until = [&](const std::optional<std::pair<std::string, bool>>& key) {
    while (true) {
      for (const auto& [k, id] : ids) {
        if (jobs.count(k)) continue;
        grpc::ClientContext ctx;
        v1::GetJobRequest request;
        request.set_job_id(id);
        v1::Job job;
        if (stub->GetJob(&ctx, request, &job).ok() && Finished(job)) {
          std::fprintf(stderr, "%s %s: %s, best speedup %.3f\n", k.first.c_str(),
                       k.second ? "with memory" : "without memory", v1::JobState_Name(job.state()).c_str(),
                       job.best_speedup());
          jobs[k] = job;
        }
      }
      if (key.has_value() ? jobs.count(*key) > 0 : jobs.size() == ids.size()) return;
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
  };
  // The arm without memory (and, unless shared, the memory arm) is submitted at once: the cluster interleaves
  // the jobs over its workers. A shared memory runs the problems in order.
  for (const auto& problem : kProblems) {
    for (bool memory : {true, false}) {
      if (memory && o.shared) continue;
      auto id = submit(problem, memory);
      if (!id.ok()) {
        std::fprintf(stderr, "memory_ablation: %s\n", std::string(id.status().message()).c_str());
        return 1;
      }
      ids[{problem, memory}] = *id;
    }
  }
  if (o.shared) {
    for (const auto& problem : kProblems) {
      auto id = submit(problem, true);
      if (!id.ok()) {
        std::fprintf(stderr, "memory_ablation: %s\n", std::string(id.status().message()).c_str());
        return 1;
      }
      ids[{problem, true}] = *id;
      poll_until(std::make_pair(problem, true));
    }
  }
  poll_until(std::nullopt);
  std::printf(
      "| problem | baseline ms | %% of peak before | best ms (memory) | speedup (memory) | %% of peak "
      "(memory) | best ms (no memory) | speedup (no memory) | %% of peak (no memory) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> before, with_peak, without_peak, with_speedup, without_speedup;
  for (const auto& problem : kProblems) {
    const v1::Job& m = jobs[{problem, true}];
    const v1::Job& n = jobs[{problem, false}];
    std::printf("| %s | %.4f | %.1f | %.4f | %.3f | %.1f | %.4f | %.3f | %.1f |\n", problem.c_str(),
                m.baseline_latency_ms(), m.baseline_peak_percent(), m.best_latency_ms(), m.best_speedup(),
                m.best_peak_percent(), n.best_latency_ms(), n.best_speedup(), n.best_peak_percent());
    before.push_back(m.baseline_peak_percent());
    with_peak.push_back(m.best_peak_percent());
    without_peak.push_back(n.best_peak_percent());
    with_speedup.push_back(m.best_speedup());
    without_speedup.push_back(n.best_speedup());
  }
  std::printf("| **geometric mean** | | %.1f | | %.3f | %.1f | | %.3f | %.1f |\n", GeoMean(before),
              GeoMean(with_speedup), GeoMean(with_peak), GeoMean(without_speedup), GeoMean(without_peak));
  return 0;
}

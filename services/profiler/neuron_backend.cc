// The `neuron` backend's latency protocol (reference: AccelOpt's NKIKernel.profile): the runner saved the
// NEFF and one NTFF per profiled run; `neuron-profile view --output-format summary-json` gives each run's
// total time. Up to 3 rounds of 10 runs, stopping at the first whose spread is at most 1%, keeping the round
// with the smallest spread; counters come from the first run's summary.
//
// Not run on Trainium hardware in this project's CI: the process and parsing logic are tested against a fake
// runner and a fake neuron-profile that print recorded-format output (kernel_profiler_neuron_test.cc).
#include <algorithm>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "services/profiler/kernel_profiler.h"
#include "services/profiler/neuron_profile.h"

namespace accelopt::profiler {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxRounds = 3;

std::vector<std::string> TracesIn(const std::string& dir) {
  std::vector<std::string> traces;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".ntff") traces.push_back(entry.path().filename().string());
  }
  std::sort(traces.begin(), traces.end());
  return traces;
}

}  // namespace

void KernelProfiler::MeasureOnNeuron(const sandbox::SandboxSpec& runner, const std::string& scratch,
                                     const std::atomic<bool>* cancel, v1::ProfileResult* result) const {
  auto fail = [&](std::string message) {
    v1::ProfileResult infra;
    infra.set_verdict(v1::VERDICT_INFRA_ERROR);
    infra.set_message(std::move(message));
    *result = std::move(infra);
  };
  const std::string work = runner.use_bwrap ? "/scratch" : scratch;
  std::optional<v1::LatencyStats> best;
  for (int round = 1; round <= kMaxRounds; ++round) {
    const std::string round_dir = absl::StrCat(scratch, "/ntff/round", round);
    if (round > 1) {
      // Another round of profiled runs of the same NEFF, without the correctness checks.
      sandbox::SandboxSpec again = runner;
      auto dir = std::find(again.argv.begin(), again.argv.end(), "--ntff-dir");
      if (dir == again.argv.end() || dir + 1 == again.argv.end()) return fail("neuron runner: no --ntff-dir");
      *(dir + 1) = absl::StrCat(work, "/ntff/round", round);
      again.argv.push_back("--timing-round-only");
      auto outcome = sandbox::RunInSandbox(again, cancel);
      if (!outcome.ok() || outcome->ending != sandbox::SandboxOutcome::Ending::kExited || outcome->exit_code != 0) {
        return fail(absl::StrCat("neuron runner: timing round ", round, " failed"));
      }
    }
    std::vector<double> times_ms;
    for (const std::string& trace : TracesIn(round_dir)) {
      sandbox::SandboxSpec view;
      view.use_bwrap = false;  // our own tool, on our own files
      view.scratch_dir = scratch;
      view.argv = {options_.neuron_profile_bin, "view", "--output-format",      "summary-json", "-n",
                   scratch + "/kernel.neff",    "-s",   round_dir + "/" + trace};
      view.env = {{"PATH", "/usr/bin:/bin:/opt/aws/neuron/bin"}};
      view.timeout = absl::Minutes(2);
      auto outcome = sandbox::RunInSandbox(view, cancel);
      if (!outcome.ok() || outcome->ending != sandbox::SandboxOutcome::Ending::kExited || outcome->exit_code != 0) {
        return fail(absl::StrCat("neuron-profile view failed on ", trace));
      }
      // Log lines may precede the JSON document.
      const std::string& out = outcome->output;
      auto start = out.find_first_of("[{");
      auto summary = ParseNeuronProfileSummary(start == std::string::npos ? out : out.substr(start));
      if (!summary.ok()) return fail(absl::StrCat("neuron-profile view on ", trace, ": ", summary.status().message()));
      if (round == 1 && times_ms.empty()) *result->mutable_counters() = summary->counters;
      times_ms.push_back(summary->total_time_seconds * 1e3);
    }
    if (times_ms.empty()) return fail(absl::StrCat("neuron runner saved no traces in round ", round));
    v1::LatencyStats stats = RoundStats(times_ms);
    if (!best.has_value() || stats.rel_diff() < best->rel_diff()) best = stats;
    if (RoundIsStable(stats)) break;
  }
  *result->mutable_latency() = *best;
}

}  // namespace accelopt::profiler

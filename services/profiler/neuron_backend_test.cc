// The `neuron` backend's process and parsing logic against recorded-format fakes of the Neuron runner and
// of neuron-profile (services/profiler/testdata/neuron/README.md).
#include <gtest/gtest.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "libs/core/file.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/kernel_profiler.h"
#include "services/profiler/neuron_profile.h"
#include "services/profiler/trainium/device_params.h"

namespace accelopt::profiler {
namespace {

const std::string kFakes = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/neuron/";

// A profiler on the neuron backend with the fake runner and `neuron_profile_bin`.
KernelProfiler NeuronProfiler(const std::string& neuron_profile_bin) {
  KernelProfilerOptions options;
  options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/fake_harness";
  v1::ProfilerConfig config;
  config.mutable_neuron()->set_profile_bin(neuron_profile_bin);
  auto backend = BuiltinBackends().Create(v1::DEVICE_NEURON, config);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return KernelProfiler(options, *std::move(backend));
}

TEST(NeuronProfileTest, ParsesTheSummaryFormats) {
  auto s = ParseNeuronProfileSummary(R"({"summary": [{"total_time": 0.0042, "hbm_read_bytes": 10,
                                          "psum_write_bytes": 3.5}]})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->total_time_seconds, 0.0042);
  EXPECT_DOUBLE_EQ(s->counters.hbm_read_bytes(), 10);
  EXPECT_DOUBLE_EQ(s->counters.psum_write_bytes(), 3.5);
  EXPECT_FALSE(s->counters.has_spill_save_bytes());
  EXPECT_TRUE(ParseNeuronProfileSummary(R"([{"total_time": 1}])").ok());
  EXPECT_NE(ParseNeuronProfileSummary(R"({"summary": []})").status().message().find("no entry"), std::string::npos);
  EXPECT_NE(ParseNeuronProfileSummary(R"([{"hbm_read_bytes": 1}])").status().message().find("total_time"),
            std::string::npos);
}

TEST(NeuronProfileTest, RoundStatisticsAndStability) {
  v1::LatencyStats stats = RoundStats({1.0, 1.02, 1.01});
  EXPECT_DOUBLE_EQ(stats.mean_ms(), 1.01);
  EXPECT_NEAR(stats.rel_diff(), 0.02, 1e-12);
  EXPECT_FALSE(RoundIsStable(stats));
  EXPECT_TRUE(RoundIsStable(RoundStats({1.0, 1.005})));
}

TEST(NeuronBackendTest, RetriesANoisyRoundAndKeepsTheStableOne) {
  const KernelProfiler profiler = NeuronProfiler(kFakes + "neuron-profile");
  v1::Problem problem;
  problem.set_reference_source("def get_inputs(): return []\n");
  v1::Kernel kernel;
  kernel.set_source("def kernel(): pass\n");
  v1::ProfileResult r = profiler.Profile(kernel, problem, v1::ProfileOptions(), 0, nullptr);
  ASSERT_EQ(v1::Verdict_Name(r.verdict()), "VERDICT_OK") << r.message();
  // Round 1 spread 5% (> 1%) was retried; round 2 (0.5%) was kept.
  EXPECT_EQ(r.latency().runs(), 10);
  EXPECT_NEAR(r.latency().rel_diff(), 0.005, 1e-9);
  EXPECT_NEAR(r.latency().min_ms(), 1.333, 1e-9);
  EXPECT_DOUBLE_EQ(r.counters().hbm_read_bytes(), 117440512);
  EXPECT_DOUBLE_EQ(r.counters().vector_engine_active_time_percent(), 0.7387849379303731);
  ASSERT_TRUE(r.has_peak_percent());
  EXPECT_EQ(r.bound(), v1::BOUND_MEMORY);
  EXPECT_EQ(r.device(), v1::DEVICE_NEURON);
  EXPECT_EQ(r.seeds_checked(), 5);
  EXPECT_EQ(r.backend_version(), "neuron: Neuron SDK, neuron-profile");
}

TEST(NeuronBackendTest, ABf16CapableRunIsHeldToTheFastestMatmulPeakUnlessLowPrecisionIsBanned) {
  // The fake runner's rounds keep a mean of 1.333 ms * 1.0025; the problem's matmul FLOPs take twice that at the
  // fp32 peak, so the run is at 200% of the fp32 peak and at 200% / pe_fp32_factor of the 16-bit one.
  auto trn1 = trainium::BuiltinDeviceParams("trn1");
  ASSERT_TRUE(trn1.ok()) << trn1.status();
  const double mean_s = 1.333e-3 * 1.0025;
  const KernelProfiler profiler = NeuronProfiler(kFakes + "neuron-profile");
  v1::Problem problem;
  problem.set_reference_source(
      absl::StrCat("# fake roofline matmul_flops: ", 2 * mean_s * trn1->roofline_peak_matmul_flops,
                   "\ndef get_inputs(): return []\n"));
  v1::Kernel kernel;
  kernel.set_source("def kernel(): pass\n");

  v1::ProfileResult open = profiler.Profile(kernel, problem, v1::ProfileOptions(), 0, nullptr);
  ASSERT_EQ(v1::Verdict_Name(open.verdict()), "VERDICT_OK") << open.message();
  EXPECT_EQ(open.bound(), v1::BOUND_MATMUL);
  EXPECT_NEAR(open.peak_percent(), 200 / trn1->pe_fp32_factor, 0.01);

  v1::ProfileOptions banned;
  banned.set_ban_low_precision(true);
  v1::ProfileResult fp32 = profiler.Profile(kernel, problem, banned, 0, nullptr);
  EXPECT_EQ(v1::Verdict_Name(fp32.verdict()), "VERDICT_SUSPICIOUS") << fp32.message();
  EXPECT_NE(fp32.message().find("200.0% of peak"), std::string::npos) << fp32.message();
}

TEST(NeuronBackendTest, MissingNeuronProfileIsAnInfraError) {
  const KernelProfiler profiler = NeuronProfiler("/nonexistent/neuron-profile");
  v1::Problem problem;
  problem.set_reference_source("x = 1\n");
  v1::Kernel kernel;
  kernel.set_source("def kernel(): pass\n");
  v1::ProfileResult r = profiler.Profile(kernel, problem, v1::ProfileOptions(), 0, nullptr);
  EXPECT_EQ(v1::Verdict_Name(r.verdict()), "VERDICT_INFRA_ERROR");
  EXPECT_NE(r.message().find("neuron-profile"), std::string::npos) << r.message();
}

TEST(NeuronBackendTest, StartUpCheckNamesTheMissingNeuronProfile) {
  absl::Status s = NeuronProfiler("/nonexistent/neuron-profile").CheckReady();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("neuron.profile_bin: '/nonexistent/neuron-profile' not found"), std::string::npos) << s;
}

TEST(NeuronBackendTest, TheRunnerMayStartProcesses) {
  // the Neuron SDK runs its compiler as a process, so step A's seccomp filter against new processes is off
  auto backend = BuiltinBackends().Create(v1::DEVICE_NEURON, v1::ProfilerConfig());
  ASSERT_TRUE(backend.ok()) << backend.status();
  const BackendRunner runner = (*backend)->Runner({"/harness", "/scratch"});
  EXPECT_EQ(runner.runner, "run_neuron.py");
  EXPECT_NE(std::find(runner.env.begin(), runner.env.end(),
                      std::pair<std::string, std::string>("ACCELOPT_PROCESS_FILTER", "off")),
            runner.env.end());
}

}  // namespace
}  // namespace accelopt::profiler

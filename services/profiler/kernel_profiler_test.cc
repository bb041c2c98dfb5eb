// Real kernels through the real harness in the real sandbox: correct and broken ones (hostile ones are in
// hostile_kernels_test.cc).
#include "services/profiler/kernel_profiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "libs/core/file.h"
#include "services/profiler/backend_registry.h"

namespace accelopt::profiler {
namespace {

const std::string kTestdata = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/double/";

class KernelProfilerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("ACCELOPT_TEST_SECRET", "hunter2-secret", 1); }

  v1::ProfileResult ProfileFile(const std::string& kernel_file, double timeout_seconds = 20,
                                v1::Device device = v1::DEVICE_SIM_TRN1,
                                const std::string& reference_file = "reference.py") {
    KernelProfilerOptions options;
    options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/harness";
    options.limits.memory_mb = 1024;
    options.limits.cpu_seconds = 60;
    options.worker_name = "test";
    v1::Problem problem;
    problem.set_reference_source(*core::ReadFile(kTestdata + reference_file));
    problem.set_metadata_yaml(*core::ReadFile(kTestdata + "problem.yaml"));
    v1::Kernel kernel;
    kernel.set_source(*core::ReadFile(kTestdata + kernel_file));
    v1::ProfileOptions profile_options;
    profile_options.set_seeds(3);
    profile_options.set_timeout_seconds(timeout_seconds);
    auto backend = BuiltinBackends().Create(device, v1::ProfilerConfig());
    EXPECT_TRUE(backend.ok()) << backend.status();
    return KernelProfiler(options, *std::move(backend)).Profile(kernel, problem, profile_options, 0, nullptr);
  }
};

TEST_F(KernelProfilerTest, CorrectKernelIsTimedWithCountersAndPeak) {
  v1::ProfileResult r = ProfileFile("kernel.py");
  ASSERT_EQ(v1::Verdict_Name(r.verdict()), "VERDICT_OK") << r.message();
  EXPECT_EQ(r.seeds_checked(), 3);
  EXPECT_GT(r.latency().mean_ms(), 0);
  EXPECT_EQ(r.counters().hbm_read_bytes(), 128 * 256 * 4);
  EXPECT_EQ(r.counters().hbm_write_bytes(), 128 * 256 * 4);
  ASSERT_TRUE(r.has_peak_percent());
  EXPECT_GT(r.peak_percent(), 0);
  EXPECT_LE(r.peak_percent(), 100);
  EXPECT_EQ(r.bound(), v1::BOUND_MEMORY);
  EXPECT_GT(r.engine_active().dma(), 0);
  EXPECT_EQ(r.device(), v1::DEVICE_SIM_TRN1);
  EXPECT_EQ(r.backend_version(), "sim-trn1 simulator, timing model v1");
}

// Both protocol steps simulate the device's NeuronCore generation: a kernel branching on it takes the branch of the
// device it is profiled for.
TEST_F(KernelProfilerTest, TheKernelIsToldTheGenerationOfTheDevice) {
  v1::ProfileResult on_trn2 = ProfileFile("doubles_on_trn2_only.py", 20, v1::DEVICE_SIM_TRN2);
  EXPECT_EQ(v1::Verdict_Name(on_trn2.verdict()), "VERDICT_OK") << on_trn2.message();
  EXPECT_EQ(on_trn2.device(), v1::DEVICE_SIM_TRN2);
  v1::ProfileResult on_trn1 = ProfileFile("doubles_on_trn2_only.py", 20, v1::DEVICE_SIM_TRN1);
  EXPECT_EQ(v1::Verdict_Name(on_trn1.verdict()), "VERDICT_INCORRECT") << on_trn1.message();
}

// The kernel's process never builds the problem's inputs: the trusted replay sends it their shapes.
TEST_F(KernelProfilerTest, TheKernelsProcessIsSentTheInputShapes) {
  v1::ProfileResult r = ProfileFile("kernel.py", 20, v1::DEVICE_SIM_TRN1, "reference_inputs_in_step_b_only.py");
  EXPECT_EQ(v1::Verdict_Name(r.verdict()), "VERDICT_OK") << r.message();
  EXPECT_EQ(r.seeds_checked(), 3);
}

// The plausibility check counts the bytes the outputs need on the device: 2 per bfloat16 element (stored wider in
// the simulator), and of an argument updated in place and returned, only the part the kernel wrote.
TEST_F(KernelProfilerTest, OutputsNeedTheirDeviceBytesAndOnlyTheWrittenPartOfAnArgument) {
  v1::ProfileResult bf16 = ProfileFile("bf16_output.py", 20, v1::DEVICE_SIM_TRN1, "reference_bf16_exact.py");
  EXPECT_EQ(v1::Verdict_Name(bf16.verdict()), "VERDICT_OK") << bf16.message();
  EXPECT_EQ(bf16.counters().hbm_write_bytes(), 128 * 256 * 2);
  v1::ProfileResult in_place =
      ProfileFile("updates_half_in_place.py", 20, v1::DEVICE_SIM_TRN1, "reference_half_in_place.py");
  EXPECT_EQ(v1::Verdict_Name(in_place.verdict()), "VERDICT_OK") << in_place.message();
  EXPECT_EQ(in_place.counters().hbm_write_bytes(), 64 * 256 * 4);
}

struct HostileCase {
  std::string file;
  v1::Verdict verdict;
  std::string message_part;
};

class HostileKernelTest : public KernelProfilerTest, public ::testing::WithParamInterface<HostileCase> {};

TEST_P(HostileKernelTest, GetsTheRightVerdictAndTheWorkerStillServes) {
  const HostileCase& c = GetParam();
  v1::ProfileResult r = ProfileFile(c.file, /*timeout_seconds=*/4);
  EXPECT_EQ(v1::Verdict_Name(r.verdict()), v1::Verdict_Name(c.verdict)) << r.message();
  EXPECT_NE(r.message().find(c.message_part), std::string::npos) << r.message();
  EXPECT_EQ(r.message().find("hunter2-secret"), std::string::npos);
  // The next request is served normally.
  EXPECT_EQ(ProfileFile("kernel.py").verdict(), v1::VERDICT_OK);
}

// cached_output: every seed re-executes the recorded program, so a result cached in kernel Python cannot be
// replayed; the program computes 2x for each input and is correct. backing_array: its `import atexit` breaks an
// NKI static rule before anything runs (the harness cheat suite checks the replay catches the backing-array
// write itself). endless_after_error: the replay's verdict on an early instruction ends the profile although the
// recording would never end (it is stopped), with the kernel's source line quoted.
INSTANTIATE_TEST_SUITE_P(Hostile, HostileKernelTest,
                         ::testing::Values(HostileCase{"syntax_error.py", v1::VERDICT_COMPILE_ERROR, "kernel.py:7"},
                                           HostileCase{"wrong_shape.py", v1::VERDICT_INCORRECT, "shape"},
                                           HostileCase{"nan_output.py", v1::VERDICT_INCORRECT, "NaN"},
                                           HostileCase{"constant_output.py", v1::VERDICT_INCORRECT,
                                                       "relative L2 error"},
                                           HostileCase{"cached_output.py", v1::VERDICT_OK, ""},
                                           HostileCase{"backing_array.py", v1::VERDICT_COMPILE_ERROR, "atexit"},
                                           HostileCase{"endless_after_error.py", v1::VERDICT_COMPILE_ERROR,
                                                       "kernel.py:11: shifted = nl.multiply(tile[16:80, :], 2.0)\n"
                                                       "an engine access of 64 partitions must start"}),
                         [](const ::testing::TestParamInfo<HostileCase>& info) {
                           return info.param.file.substr(0, info.param.file.size() - 3);
                         });

// A sim-trn1 profiler with `options`, for the start-up checks.
absl::Status CheckReadyWith(KernelProfilerOptions options) {
  auto backend = BuiltinBackends().Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig());
  EXPECT_TRUE(backend.ok()) << backend.status();
  return KernelProfiler(std::move(options), *std::move(backend)).CheckReady();
}

TEST(KernelProfilerCheckReadyTest, PassesWithTheRealHarnessAndNamesEachMissingPiece) {
  KernelProfilerOptions options;
  options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/harness";
  EXPECT_TRUE(CheckReadyWith(options).ok()) << CheckReadyWith(options);

  KernelProfilerOptions no_runner = options;
  no_runner.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/fake_harness";
  EXPECT_EQ(CheckReadyWith(no_runner).message(),
            absl::StrCat("harness_dir: no run_kernel.py in '", no_runner.harness_dir, "'"));

  KernelProfilerOptions no_python = options;
  no_python.python = "/nonexistent/python3";
  EXPECT_EQ(CheckReadyWith(no_python).message(), "python: '/nonexistent/python3' is not executable");

  KernelProfilerOptions no_bwrap = options;
  no_bwrap.bwrap = "/nonexistent/bwrap";
  EXPECT_EQ(CheckReadyWith(no_bwrap).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(CheckReadyWith(no_bwrap).message().find("sandbox.bwrap: '/nonexistent/bwrap' not found"),
            std::string::npos);
  no_bwrap.use_bwrap = false;
  EXPECT_TRUE(CheckReadyWith(no_bwrap).ok());
}

}  // namespace
}  // namespace accelopt::profiler

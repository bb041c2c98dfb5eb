// The hostile-kernel suite: every kernel in testdata/hostile/ through a worker set up as accelopt-profiler sets
// itself up (its own uid range, the harness staged from a private 0700 checkout, the real sandbox). Each kernel
// names its expected verdict and a part of the message in its first lines ("# expect: VERDICT", "# message:
// text"). After each one the worker must serve an honest kernel normally, the scratch root must hold nothing of
// the run, and the service's secret must appear nowhere the submitter can read.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/core/file.h"
#include "libs/sandbox/worker_sandbox.h"
#include "libs/testing/scratch_dir.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/kernel_profiler.h"

namespace accelopt::profiler {
namespace {

namespace fs = std::filesystem;

const std::string kHostile = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/hostile/";
const std::string kDouble = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/double/";
constexpr char kSecret[] = "svc-secret-5e1c0ffee";

struct HostileKernel {
  std::string file;
  std::string verdict;  // e.g. "SANDBOX_VIOLATION"
  std::string message_part;
};

void PrintTo(const HostileKernel& k, std::ostream* os) { *os << k.file; }

// Structurally valid UTF-8 (what a proto string field must hold to cross gRPC).
bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xE  ? 3
                          : (lead >> 3) == 0x1E ? 4
                                                : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

std::vector<HostileKernel> HostileKernels() {
  std::vector<HostileKernel> kernels;
  for (const auto& entry : fs::directory_iterator(kHostile)) {
    HostileKernel k{entry.path().filename().string(), "", ""};
    for (absl::string_view line : absl::StrSplit(*core::ReadFile(entry.path().string()), '\n')) {
      if (absl::ConsumePrefix(&line, "# expect: ")) k.verdict = std::string(line);
      if (absl::ConsumePrefix(&line, "# message: ")) k.message_part = std::string(line);
    }
    kernels.push_back(k);
  }
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return kernels;
}

class HostileKernelsTest : public ::testing::TestWithParam<HostileKernel> {
 protected:
  static void SetUpTestSuite() {
    setenv("ACCELOPT_SERVICE_TOKEN", kSecret, 1);
    scratch_ = new accelopt::testing::ScratchDir("HostileKernelsTest", 0755);  // the sandbox users pass through
    root_ = new std::string(scratch_->path());
    // A checkout the sandbox users cannot enter: the worker must stage the harness to run anything.
    const std::string checkout = *root_ + "/private-home/checkout";
    fs::create_directories(checkout);
    fs::copy(ACCELOPT_SOURCE_DIR "/services/profiler/harness", checkout + "/harness", fs::copy_options::recursive);
    chmod((*root_ + "/private-home").c_str(), 0700);
    fs::create_directories(*root_ + "/scratch");
    auto prepared = sandbox::PrepareWorkerSandbox(checkout + "/harness", *root_ + "/scratch", 0, 1);
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    worker_ = new sandbox::WorkerSandbox(*std::move(prepared));
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete root_;
    delete scratch_;
  }

  v1::ProfileResult Profile(const std::string& kernel_path, double timeout_seconds) {
    KernelProfilerOptions options;
    options.harness_dir = worker_->harness.path();
    options.sandbox_uid_base = worker_->uids.base();
    options.scratch_root = worker_->scratch.path();
    options.limits.memory_mb = 1024;
    options.limits.tmp_mb = 64;
    options.limits.scratch_mb = 64;
    options.limits.cpu_seconds = 60;
    options.worker_name = "hostile-test";
    v1::Problem problem;
    problem.set_reference_source(*core::ReadFile(kDouble + "reference.py"));
    problem.set_metadata_yaml(*core::ReadFile(kDouble + "problem.yaml"));
    v1::Kernel kernel;
    kernel.set_source(*core::ReadFile(kernel_path));
    v1::ProfileOptions profile_options;
    profile_options.set_seeds(2);
    profile_options.set_timeout_seconds(timeout_seconds);
    auto backend = BuiltinBackends().Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig());
    EXPECT_TRUE(backend.ok()) << backend.status();
    return KernelProfiler(options, *std::move(backend)).Profile(kernel, problem, profile_options, 0, nullptr);
  }

  // Nothing is left in the worker's scratch directory between runs.
  std::vector<std::string> ScratchLeftovers() {
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(worker_->scratch.path())) left.push_back(entry.path().string());
    return left;
  }

  static accelopt::testing::ScratchDir* scratch_;
  static std::string* root_;
  static sandbox::WorkerSandbox* worker_;
};

accelopt::testing::ScratchDir* HostileKernelsTest::scratch_ = nullptr;
std::string* HostileKernelsTest::root_ = nullptr;
sandbox::WorkerSandbox* HostileKernelsTest::worker_ = nullptr;

TEST_P(HostileKernelsTest, EndsInItsVerdictLeaksNothingAndTheWorkerServesTheNextKernel) {
  const HostileKernel& k = GetParam();
  ASSERT_FALSE(k.verdict.empty()) << k.file << " has no '# expect: VERDICT' line";
  struct statvfs before, after;
  ASSERT_EQ(statvfs(root_->c_str(), &before), 0);
  v1::ProfileResult r = Profile(kHostile + k.file, /*timeout_seconds=*/6);
  ASSERT_EQ(statvfs(root_->c_str(), &after), 0);

  EXPECT_EQ(v1::Verdict_Name(r.verdict()), "VERDICT_" + k.verdict) << r.message();
  EXPECT_TRUE(absl::StrContains(r.message(), k.message_part)) << r.message();
  EXPECT_LT(r.message().size(), (16u << 10) + 64);  // kernel_profiler.cc bounds every message
  EXPECT_TRUE(IsValidUtf8(r.message()));
  EXPECT_FALSE(absl::StrContains(r.DebugString(), kSecret)) << r.message();
  EXPECT_TRUE(ScratchLeftovers().empty()) << ScratchLeftovers()[0];
  const double used_mib = (static_cast<double>(before.f_bavail) - after.f_bavail) * before.f_frsize / (1 << 20);
  EXPECT_LT(used_mib, 100) << "host disk use grew by " << used_mib << " MiB";
  EXPECT_FALSE(fs::exists("/usr/lib/evil.bin"));

  v1::ProfileResult honest = Profile(kDouble + "kernel.py", /*timeout_seconds=*/30);
  EXPECT_EQ(v1::Verdict_Name(honest.verdict()), "VERDICT_OK") << honest.message();
}

INSTANTIATE_TEST_SUITE_P(Suite, HostileKernelsTest, ::testing::ValuesIn(HostileKernels()),
                         [](const ::testing::TestParamInfo<HostileKernel>& info) {
                           return info.param.file.substr(0, info.param.file.size() - 3);
                         });

}  // namespace
}  // namespace accelopt::profiler

#include "cli/job_spec_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "libs/testing/scratch_dir.h"

namespace accelopt::cli {
namespace {

class JobSpecFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ + "/silu");
    std::ofstream(dir_ + "/silu/reference.py") << "def forward(x): return x\n";
    std::ofstream(dir_ + "/silu/kernel.py") << "import nki\n";
    std::ofstream(dir_ + "/silu/problem.yaml")
        << "name: silu\nparameters: {M: 256, N: 1024}\ntolerance: 2.0e-05\n"
        << "roofline: {vector_flops: 786432, matmul_flops: 0, hbm_bytes: 2097152}\n";
  }
  std::string Write(const std::string& yaml) {
    const std::string path = dir_ + "/job.yaml";
    std::ofstream(path) << yaml;
    return path;
  }
  testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.path();
};

TEST_F(JobSpecFileTest, LoadsTheExampleFormatWithPathsRelativeToTheFile) {
  auto spec = LoadJobSpecFile(
      Write("name: my-job\npreset: small\n"
            "problem: {reference: silu/reference.py, kernel: silu/kernel.py, metadata: silu/problem.yaml}\n"
            "device: sim-trn1\nseed: 42\n"
            "search: {iterations: 4, beam_width: 2, plans_per_candidate: 3, samples_per_plan: 2,\n"
            "         experiences_per_iteration: 8, memory_capacity: 16, memory_policy: fifo, memory_namespace: job}\n"
            "models:\n  planner: {provider: openai, endpoint: vllm, model: m}\n"
            "profile: {seeds: 5, timeout_seconds: 300}\n"
            "budget: {max_usd: 5, max_tokens: 2000000, max_device_seconds: 3600, max_wall_seconds: 7200}\n"
            "stop: {target_peak_percent: 90}\n"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "my-job");
  EXPECT_EQ(spec->problem().name(), "silu");
  EXPECT_EQ(spec->problem().reference_source(), "def forward(x): return x\n");
  EXPECT_EQ(spec->problem().reference_filename(), "reference.py");
  EXPECT_EQ(spec->problem().parameters().at("M"), "256");
  EXPECT_DOUBLE_EQ(spec->problem().roofline().hbm_bytes(), 2097152);
  EXPECT_FALSE(spec->problem().metadata_yaml().empty());
  EXPECT_EQ(spec->baseline().source(), "import nki\n");
  EXPECT_EQ(spec->device(), v1::DEVICE_SIM_TRN1);
  EXPECT_EQ(spec->seed(), 42u);
  EXPECT_EQ(spec->search().plans_per_candidate(), 3);
  EXPECT_EQ(spec->search().memory_policy(), v1::MEMORY_POLICY_FIFO);
  EXPECT_EQ(spec->models().planner().endpoint(), "vllm");
  EXPECT_DOUBLE_EQ(spec->budget().max_usd(), 5);
  EXPECT_DOUBLE_EQ(spec->stop().target_peak_percent(), 90);
}

TEST_F(JobSpecFileTest, ErrorsNameTheField) {
  struct Case {
    std::string yaml, field;
  };
  const std::vector<Case> cases = {
      {"problem: {reference: silu/reference.py, kernel: silu/kernel.py}\nsearch: {beam_widht: 2}\n",
       "search.beam_widht"},
      {"problem: {reference: silu/reference.py, kernel: silu/missing.py}\n", "problem.kernel: cannot read"},
      {"problem: {reference: silu/nope.py, kernel: silu/kernel.py}\n", "problem.reference: cannot read"},
      {"problem: {kernel: silu/kernel.py}\n", "problem.reference: required"},
      {"problem: {reference: silu/reference.py}\n", "problem.kernel: required"},
      {"problem: {reference: silu/reference.py, kernel: silu/kernel.py}\nsearch: {iterations: many}\n",
       "search.iterations"},
      {"problem: {reference: silu/reference.py, kernel: silu/kernel.py}\ndevice: gpu\n", "device"},
      {"problem: {reference: silu/reference.py, kernel: silu/kernel.py, kernle: x.py}\n", "problem.kernle"},
      {"problem: {reference: [silu/reference.py], kernel: silu/kernel.py}\n", "problem.reference"},
      {"problem: {reference: silu/reference.py, kernel: silu/kernel.py}\nbaseline: {source: x}\n",
       "problem.kernel: give either a file or baseline.source"},
      {"problem: {kernel: silu/kernel.py, metadata: silu/problem.yaml, reference_source: x}\n",
       "problem.metadata: needs problem.reference"},
  };
  for (const Case& c : cases) {
    auto spec = LoadJobSpecFile(Write(c.yaml));
    EXPECT_TRUE(absl::IsInvalidArgument(spec.status())) << c.yaml << " -> " << spec.status();
    EXPECT_NE(spec.status().message().find(c.field), absl::string_view::npos) << c.field << " in " << spec.status();
  }
  EXPECT_TRUE(absl::IsNotFound(LoadJobSpecFile(dir_ + "/absent.yaml").status()));
}

TEST_F(JobSpecFileTest, UnknownProblemKeysListTheFileKeysAmongTheKnownOnes) {
  auto spec = LoadJobSpecFile(Write("problem: {reference: silu/reference.py, kernel: silu/kernel.py, kernle: x}\n"));
  ASSERT_TRUE(absl::IsInvalidArgument(spec.status()));
  EXPECT_NE(spec.status().message().find("(line 1)"), absl::string_view::npos) << spec.status();
  for (const char* key : {"reference", "kernel", "metadata", "tolerance"}) {
    EXPECT_NE(spec.status().message().find(key), absl::string_view::npos) << key << " in " << spec.status();
  }
}

// Fields the file format never listed by hand: they are JobSpec fields, so the file accepts them.
TEST_F(JobSpecFileTest, AnyJobSpecFieldCanBeWrittenInTheFile) {
  auto spec =
      LoadJobSpecFile(Write("problem: {reference: silu/reference.py, kernel: silu/kernel.py, tolerance: 0.001}\n"
                            "models:\n  planner: {provider: builtin, extra_body: {top_p: 0.5}}\n"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_DOUBLE_EQ(spec->problem().tolerance(), 0.001);  // overrides problem.yaml's 2e-05
  EXPECT_EQ(spec->problem().name(), "silu");             // from problem.yaml
  EXPECT_DOUBLE_EQ(spec->models().planner().extra_body().fields().at("top_p").number_value(), 0.5);
  EXPECT_EQ(spec->name(), "job");  // the file's stem when no name is given

  auto inline_spec = LoadJobSpecFile(
      Write("problem: {name: p, reference_source: 'def forward(x): return x'}\nbaseline: {source: 'import nki'}\n"));
  ASSERT_TRUE(inline_spec.ok()) << inline_spec.status();
  EXPECT_EQ(inline_spec->problem().reference_source(), "def forward(x): return x");
  EXPECT_EQ(inline_spec->baseline().source(), "import nki");
}

TEST_F(JobSpecFileTest, TheExampleJobFilesLoad) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ACCELOPT_SOURCE_DIR) + "/examples")) {
    const std::filesystem::path job = entry.path() / "job.yaml";
    if (!std::filesystem::exists(job)) continue;
    auto spec = LoadJobSpecFile(job.string());
    EXPECT_TRUE(spec.ok()) << job << ": " << spec.status();
    if (spec.ok()) {
      EXPECT_FALSE(spec->problem().reference_source().empty()) << job;
      EXPECT_FALSE(spec->baseline().source().empty()) << job;
    }
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
}

TEST_F(JobSpecFileTest, RooflineTermsMayBeArithmeticOverParameters) {
  std::ofstream(dir_ + "/silu/problem.yaml")
      << "name: silu\nparameters: {M: 256, N: 1024}\n"
      << "roofline: {vector_flops: 3*M*N, matmul_flops: 0, hbm_bytes: '2 * 4 * M * N'}\n";
  auto spec = LoadJobSpecFile(Write("problem: {reference: silu/reference.py, kernel: silu/kernel.py}\n"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_DOUBLE_EQ(spec->problem().roofline().vector_flops(), 3.0 * 256 * 1024);
  EXPECT_DOUBLE_EQ(spec->problem().roofline().hbm_bytes(), 8.0 * 256 * 1024);
}

TEST_F(JobSpecFileTest, RooflineExpressionErrorsNameTheTerm) {
  std::ofstream(dir_ + "/silu/problem.yaml") << "parameters: {M: 256}\nroofline: {vector_flops: 3*M*Q}\n";
  auto spec = LoadJobSpecFile(Write("problem: {reference: silu/reference.py, kernel: silu/kernel.py}\n"));
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("roofline vector_flops"), std::string::npos) << spec.status();
  EXPECT_NE(spec.status().message().find("unknown name 'Q'"), std::string::npos) << spec.status();
}

}  // namespace
}  // namespace accelopt::cli

namespace accelopt::cli {
namespace {

class JobSpecHygieneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root_ + "/jobs/p");
    std::filesystem::create_directories(root_ + "/secret");
    std::ofstream(root_ + "/jobs/p/reference.py") << "def forward(x): return x\n";
    std::ofstream(root_ + "/jobs/p/kernel.py") << "import nki\n";
    std::ofstream(root_ + "/secret/shadow") << "root:$6$SECRETHASH:19000:0:99999:7:::\n";
  }
  std::string WriteJob(const std::string& kernel) {
    const std::string path = root_ + "/jobs/job.yaml";
    std::ofstream(path) << "problem: {reference: p/reference.py, kernel: " << kernel << "}\n";
    return path;
  }
  testing::ScratchDir scratch_;
  const std::string root_ = scratch_.path();
};

TEST_F(JobSpecHygieneTest, PathsOutsideTheJobDirectoryAreRefusedWithoutQuotingTheFile) {
  auto spec = LoadJobSpecFile(WriteJob("../secret/shadow"));
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("problem.kernel"), std::string::npos) << spec.status();
  EXPECT_NE(spec.status().message().find("--allow-path"), std::string::npos) << spec.status();
  EXPECT_EQ(spec.status().message().find("SECRETHASH"), std::string::npos) << spec.status();
  EXPECT_EQ(spec.status().message().find("root:"), std::string::npos) << spec.status();
}

TEST_F(JobSpecHygieneTest, SymlinksOutOfTheJobDirectoryAreRefused) {
  std::filesystem::create_symlink(root_ + "/secret/shadow", root_ + "/jobs/p/link.py");
  auto spec = LoadJobSpecFile(WriteJob("p/link.py"));
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << spec.status();
}

TEST_F(JobSpecHygieneTest, AllowPathAdmitsAnotherDirectory) {
  std::ofstream(root_ + "/secret/kernel.py") << "import nki\n";
  auto spec = LoadJobSpecFile(WriteJob("../secret/kernel.py"), {root_ + "/secret"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->baseline().source(), "import nki\n");
}

TEST_F(JobSpecHygieneTest, NonUtf8KernelGetsThePreciseOffset) {
  std::ofstream(root_ + "/jobs/p/bad.py", std::ios::binary) << "import nki\n\xff\xfe";
  auto spec = LoadJobSpecFile(WriteJob("p/bad.py"));
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("not UTF-8 text (invalid byte 0xff at offset 11)"), std::string::npos)
      << spec.status();
}

TEST_F(JobSpecHygieneTest, OversizedKernelNamesTheDocumentedLimit) {
  std::filesystem::resize_file(root_ + "/jobs/p/kernel.py", kMaxSpecFileBytes + 1);
  auto spec = LoadJobSpecFile(WriteJob("p/kernel.py"));
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("server.max_request_bytes"), std::string::npos) << spec.status();
  EXPECT_NE(spec.status().message().find("max_kernel_bytes"), std::string::npos) << spec.status();
}

TEST_F(JobSpecHygieneTest, ADirectoryOrAFifoIsRefusedWithoutReadingIt) {
  // a FIFO would block the CLI forever, a directory read as an empty kernel
  ASSERT_EQ(mkfifo((root_ + "/jobs/p/fifo.py").c_str(), 0600), 0);
  auto fifo = LoadJobSpecFile(WriteJob("p/fifo.py"));
  ASSERT_EQ(fifo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(fifo.status().message().find("problem.kernel: '"), std::string::npos) << fifo.status();
  EXPECT_NE(fifo.status().message().find("fifo.py' is not a regular file"), std::string::npos) << fifo.status();
  std::filesystem::create_directories(root_ + "/jobs/p/dir.py");
  auto dir = LoadJobSpecFile(WriteJob("p/dir.py"));
  EXPECT_NE(dir.status().message().find("dir.py' is a directory, not a file"), std::string::npos) << dir.status();
  auto spec_fifo = LoadJobSpecFile(root_ + "/jobs/p/fifo.py");
  EXPECT_NE(spec_fifo.status().message().find("is not a regular file"), std::string::npos) << spec_fifo.status();
}

TEST(FirstInvalidUtf8Test, AcceptsUtf8AndFindsTheFirstBadByte) {
  EXPECT_EQ(FirstInvalidUtf8("plain ascii"), -1);
  EXPECT_EQ(FirstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), -1);
  EXPECT_EQ(FirstInvalidUtf8("ab\x80"), 2);         // stray continuation byte
  EXPECT_EQ(FirstInvalidUtf8("a\xc3"), 1);          // truncated sequence
  EXPECT_EQ(FirstInvalidUtf8("\xc0\xaf"), 0);       // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("x\xed\xa0\x80"), 1);  // UTF-16 surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x28\xa1"), 1);   // bad continuation
}

}  // namespace
}  // namespace accelopt::cli

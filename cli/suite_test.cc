#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "cli/nkibench_import.h"
#include "cli/suite_file.h"
#include "cli/suite_results.h"
#include "libs/core/file.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::cli {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(ACCELOPT_SOURCE_DIR) + "/" + relative; }

TEST(SuiteFile, TheExamplesSuiteLoadsWithItsOverrides) {
  auto suite = LoadSuiteFile(Source("examples/suite.yaml"));
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(suite->name, "examples");
  EXPECT_EQ(suite->concurrency, 2);
  ASSERT_EQ(suite->problems.size(), 2u);
  EXPECT_EQ(suite->problems[0].name, "softmax");
  EXPECT_EQ(suite->problems[1].name, "silu");
  for (const SuiteProblem& p : suite->problems) {
    EXPECT_EQ(p.spec.search().iterations(), 2) << p.name;  // the override
    EXPECT_EQ(p.spec.search().beam_width(), 2) << p.name;  // from the job file
    EXPECT_FALSE(p.spec.problem().reference_source().empty()) << p.name;
  }
}

TEST(SuiteFile, ErrorsNameTheEntry) {
  testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  ASSERT_TRUE(core::WriteFileAtomic(dir + "/s.yaml", "problems: [missing/job.yaml]\n").ok());
  auto suite = LoadSuiteFile(dir + "/s.yaml");
  ASSERT_FALSE(suite.ok());
  EXPECT_THAT(suite.status().message(), HasSubstr("problems[0]"));
  ASSERT_TRUE(core::WriteFileAtomic(dir + "/s.yaml", "problem: []\n").ok());
  EXPECT_THAT(LoadSuiteFile(dir + "/s.yaml").status().message(), HasSubstr("unknown key 'problem'"));
}

std::vector<SuiteRow> Rows() {
  return {{"a", "j1", "SUCCEEDED", 10, 5, 2, 10.0, 20.0},
          {"b", "j2", "SUCCEEDED", 8, 1, 8, 5.0, 40.0},
          {"c", "j3", "FAILED", 3, 0, 0, std::nullopt, std::nullopt}};
}

TEST(SuiteResults, GeometricMeansSkipMissingValues) {
  const SuiteSummary s = Summarize(Rows());
  EXPECT_EQ(s.problems, 3);
  EXPECT_EQ(s.with_speedup, 2);
  EXPECT_DOUBLE_EQ(*s.geomean_speedup, 4.0);                  // sqrt(2 * 8)
  EXPECT_DOUBLE_EQ(*s.geomean_peak_before, std::sqrt(50.0));  // sqrt(10 * 5)
  EXPECT_DOUBLE_EQ(*s.geomean_peak_after, std::sqrt(800.0));  // sqrt(20 * 40)
  EXPECT_FALSE(Summarize({}).geomean_speedup.has_value());
}

TEST(SuiteResults, TableJsonAndHtml) {
  const std::string md = SuiteMarkdown("demo", Rows());
  EXPECT_THAT(md, HasSubstr("| a | j1 | SUCCEEDED | 10.0000 | 5.0000 | 2.000x | 10.0% | 20.0% |"));
  EXPECT_THAT(md, HasSubstr("| c | j3 | FAILED | 3.0000 | - | - | - | - |"));
  EXPECT_THAT(md, HasSubstr("| **geometric mean** | | 2/3 improved | | | 4.000x | 7.1% | 28.3% |"));
  auto back = SuiteRowsFromJson(SuiteJson("demo", Rows()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(SuiteMarkdown("demo", *back), md);  // the JSON keeps everything the table shows
  const std::string html = SuiteHtml("demo", Rows());
  EXPECT_THAT(html, HasSubstr("<svg class=\"chart\""));
  EXPECT_THAT(html, HasSubstr("Percentage of peak, before and after"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(SuiteResults, CompareJoinsByProblem) {
  std::vector<SuiteRow> b = {{"a", "k1", "SUCCEEDED", 10, 2.5, 4, 10.0, 40.0},
                             {"d", "k4", "SUCCEEDED", 1, 1, 1, 1.0, 1.0}};
  const std::string md = CompareMarkdown("gpt", Rows(), "local", b);
  EXPECT_THAT(md, HasSubstr("| a | 2.000x | 4.000x | 20.0% | 40.0% |"));
  EXPECT_THAT(md, HasSubstr("| d | (absent) | 1.000x | - | 1.0% |"));
  EXPECT_THAT(md, HasSubstr("| **geometric mean** | 4.000x | 2.000x |"));

  const nlohmann::json json = CompareJson("gpt", Rows(), "local", b);
  EXPECT_EQ(json["a"], "gpt");
  ASSERT_EQ(json["problems"].size(), 4u);
  EXPECT_EQ(json["problems"][0]["problem"], "a");
  EXPECT_DOUBLE_EQ(json["problems"][0]["speedup_a"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(json["problems"][0]["speedup_b"].get<double>(), 4.0);
  EXPECT_TRUE(json["problems"][3]["speedup_a"].is_null());  // d: only in b
  EXPECT_DOUBLE_EQ(json["geomean_speedup_a"].get<double>(), 4.0);
}

TEST(NkiBenchImport, FixtureBecomesASuiteWithThePapersRoofline) {
  testing::ScratchDir scratch;
  const std::string out = scratch.Path("nkibench");
  auto imported = ImportNkiBench(Source("cli/testdata/nkibench"), out, "sim-trn1");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->problems, (std::vector<std::string>{"mystery_0", "silu_2"}));
  ASSERT_EQ(imported->warnings.size(), 1u);
  EXPECT_THAT(imported->warnings[0], HasSubstr("mystery"));
  auto suite = LoadSuiteFile(imported->suite_path);
  ASSERT_TRUE(suite.ok()) << suite.status();
  ASSERT_EQ(suite->problems.size(), 2u);
  const v1::JobSpec& silu = suite->problems[1].spec;
  EXPECT_EQ(silu.problem().name(), "silu_2");
  EXPECT_EQ(silu.problem().parameters().at("M"), "256");
  EXPECT_DOUBLE_EQ(silu.problem().roofline().vector_flops(), 3 * 256 * 1024);  // 3MN
  EXPECT_DOUBLE_EQ(silu.problem().roofline().matmul_flops(), 0);
  EXPECT_DOUBLE_EQ(silu.problem().roofline().hbm_bytes(), 4 * 2 * 256 * 1024);  // 2MN fp32 elements
  EXPECT_THAT(silu.problem().reference_source(), HasSubstr("np.exp"));
  EXPECT_THAT(silu.baseline().source(), HasSubstr("def kernel"));
  EXPECT_EQ(silu.device(), v1::DEVICE_SIM_TRN1);
  EXPECT_FALSE(suite->problems[0].spec.problem().has_roofline());
}

TEST(NkiBenchImport, EveryPaperProblemHasFormulas) {
  for (const char* p :
       {"mamba", "silu", "add_rmsnorm_matmul", "matmul_add_rmsnorm", "rmsnorm_matmul", "swiglu", "matmul",
        "transpose_matmul", "gqa_full", "rope_single_freq_apply", "bmm", "bmm_softmax", "lora", "adamw"}) {
    EXPECT_EQ(NkiBenchRoofline(p).size(), 3u) << p;
  }
  EXPECT_TRUE(NkiBenchRoofline("unknown").empty());
}

TEST(NkiBenchImport, AFolderWithoutSummaryIsNamed) {
  testing::ScratchDir scratch;
  auto imported = ImportNkiBench(scratch.Path("empty"), scratch.Path("empty_out"), "sim-trn1");
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("summary.json"));
}

}  // namespace
}  // namespace accelopt::cli

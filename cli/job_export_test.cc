#include "cli/job_export.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "libs/core/file.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::cli {
namespace {

// A finished job's report whose maps and Struct are filled in the given key order.
v1::JobReport Report(const std::vector<std::string>& keys) {
  v1::JobReport report;
  v1::Job& job = *report.mutable_job();
  job.set_job_id("job-7");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.mutable_spec()->set_name("export");
  for (const std::string& key : keys) {
    (*job.mutable_spec()->mutable_models()->mutable_planner()->mutable_extra_body()->mutable_fields())[key]
        .set_string_value(key);
    (*job.mutable_candidates())[key] = static_cast<int64_t>(key.size());
    (*job.mutable_usage_by_agent())[key].set_requests(static_cast<int64_t>(key.size()));
  }
  v1::Candidate& baseline = *report.add_lineage();
  baseline.set_candidate_id("c-0");
  v1::Candidate& best = *report.add_lineage();
  best.set_candidate_id("c-1");
  best.set_parent_id("c-0");
  best.mutable_kernel()->set_source("import nki\n");
  *report.mutable_best() = best;
  report.set_markdown("# AccelOpt job job-7\n");
  return report;
}

std::vector<std::string> Keys(bool reversed) {
  std::vector<std::string> keys;
  for (int i = 0; i < 50; ++i) keys.push_back("k" + std::to_string(i));
  if (reversed) std::reverse(keys.begin(), keys.end());
  return keys;
}

TEST(JobExportTest, ExportingTwiceGivesByteIdenticalFiles) {
  testing::ScratchDir scratch;
  const std::string first = scratch.Path("first");
  const std::string second = scratch.Path("second");
  const std::string other_order = scratch.Path("other_order");
  auto a = WriteJobExport(Report(Keys(false)), first);
  auto b = WriteJobExport(Report(Keys(false)), second);
  auto c = WriteJobExport(Report(Keys(true)), other_order);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(c.ok()) << c.status();
  const std::vector<std::string> names = {"report.md", "report.html", "lineage.json", "job.json", "best_kernel.py"};
  ASSERT_EQ(a->size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ((*a)[i], first + "/" + names[i]);
    auto x = core::ReadFile(first + "/" + names[i]);
    auto y = core::ReadFile(second + "/" + names[i]);
    auto z = core::ReadFile(other_order + "/" + names[i]);
    ASSERT_TRUE(x.ok() && y.ok() && z.ok()) << names[i];
    EXPECT_EQ(*x, *y) << names[i];
    EXPECT_EQ(*x, *z) << names[i];
  }
  auto job = core::ReadFile(first + "/job.json");
  ASSERT_TRUE(job.ok());
  EXPECT_LT(job->find("\"k0\""), job->find("\"k1\""));
  EXPECT_LT(job->find("\"k1\""), job->find("\"k10\""));
  EXPECT_EQ(*core::ReadFile(first + "/best_kernel.py"), "import nki\n");
}

TEST(JobExportTest, NoBestKernelFileWithoutABestCandidate) {
  testing::ScratchDir scratch;
  const std::string dir = scratch.Path("no_best");
  v1::JobReport report;
  report.mutable_job()->set_job_id("job-8");
  auto written = WriteJobExport(report, dir);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/best_kernel.py"));
  EXPECT_EQ(*core::ReadFile(dir + "/lineage.json"), "[]\n");
}

TEST(JobExportTest, AnUncreatableDirectoryIsNamed) {
  testing::ScratchDir scratch;
  const std::string file = scratch.Path("a_file");
  ASSERT_TRUE(core::WriteFileAtomic(file, "x").ok());
  auto written = WriteJobExport(v1::JobReport(), file + "/sub");
  EXPECT_FALSE(written.ok());
  EXPECT_NE(written.status().message().find(file + "/sub"), std::string::npos) << written.status();
}

}  // namespace
}  // namespace accelopt::cli

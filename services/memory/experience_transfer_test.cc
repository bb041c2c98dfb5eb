#include "services/memory/experience_transfer.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/experience_jsonl.h"
#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::MakeExperience;
using ::testing::HasSubstr;
using ::testing::Not;

class Memory {
 public:
  explicit Memory(const std::string& name) : scratch_("memory_" + name) {
    kv_ = std::move(storage::KvStore::Open(scratch_.Path("store"), ExperienceStore::Families()).value());
    store_ = std::move(ExperienceStore::Open(kv_.get()).value());
  }
  ExperienceStore* store() { return store_.get(); }
  MemoryMetrics* metrics() { return &metrics_; }

 private:
  prometheus::Registry registry_;
  MemoryMetrics metrics_ = MemoryMetrics::Create(registry_);
  accelopt::testing::ScratchDir scratch_;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<ExperienceStore> store_;
};

void FillTwoNamespaces(ExperienceStore* store) {
  v1::Experience e1 = MakeExperience("e1", "", "job-1", 1);
  e1.set_before_snippet("for i in range(4):\n    x[i] = \"quoted\"");
  e1.set_after_snippet("x[...] = y");
  e1.set_regression(true);
  e1.set_transformation("hoist_loads");
  e1.mutable_provenance()->mutable_created_at()->set_nanos(123000000);
  ASSERT_TRUE(store->AppendIteration({"job-1", "job-1", 1}, {e1, MakeExperience("e2", "", "job-1", 1)}, true).ok());
  ASSERT_TRUE(store->AppendIteration({"shared", "job-2", 5}, {MakeExperience("e3", "", "job-2", 5)}, true).ok());
}

TEST(ExperienceTransferTest, ExportThenImportIntoAnEmptyMemoryGivesTheSameExperiences) {
  Memory source("source"), target("target");
  FillTwoNamespaces(source.store());
  auto exported = ExportExperiences(*source.store(), "");
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->count, 3);
  std::vector<std::string> lines = absl::StrSplit(exported->jsonl, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("\"namespace\":\"job-1\""));
  EXPECT_THAT(lines[0], HasSubstr("\"before_snippet\":"));
  EXPECT_THAT(lines[0], HasSubstr("\"candidate_id\":"));

  auto counts = ImportExperiences(target.store(), target.metrics(), exported->jsonl);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->imported, 3);
  EXPECT_EQ(counts->skipped, 0);
  auto before = ListExperiences(*source.store(), "");
  auto after = ListExperiences(*target.store(), "");
  ASSERT_TRUE(before.ok() && after.ok());
  ASSERT_EQ(before->size(), after->size());
  for (size_t i = 0; i < before->size(); ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals((*before)[i], (*after)[i]))
        << (*before)[i].DebugString() << "\nvs\n"
        << (*after)[i].DebugString();
  }
  auto again = ExportExperiences(*target.store(), "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->jsonl, exported->jsonl);
}

TEST(ExperienceTransferTest, ImportSkipsAndCountsIdsAlreadyStored) {
  Memory memory("memory");
  FillTwoNamespaces(memory.store());
  std::string jsonl = absl::StrCat(ExperienceToJson(MakeExperience("e1", "job-1", "job-1", 1)), "\n",
                                   ExperienceToJson(MakeExperience("e9", "job-1", "job-1", 2)), "\n");
  auto counts = ImportExperiences(memory.store(), memory.metrics(), jsonl);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->imported, 1);
  EXPECT_EQ(counts->skipped, 1);
  EXPECT_EQ(memory.store()->Count(), 4);
}

TEST(ExperienceTransferTest, ABadLineRejectsTheWholeImportNamingTheLine) {
  Memory memory("memory");
  const std::string good = ExperienceToJson(MakeExperience("g1", "ns", "job", 1));
  struct Case {
    std::string bad_line;
    std::string expected;
  } cases[] = {
      {"{not json", "not an Experience"},
      {R"({"id":"x","namespace":"ns","summary":"s","speedup":1.2,"colour":"red"})", "not an Experience"},
      {R"({"namespace":"ns","summary":"s","speedup":1.2})", "id is empty"},
      {R"({"id":"x","namespace":"a/b","summary":"s","speedup":1.2})", "namespace"},
      {R"({"id":"x","namespace":"ns","speedup":1.2})", "summary is empty"},
      {R"({"id":"x","namespace":"ns","summary":"s","speedup":0.5})", "speedup"},
      {R"({"id":"g1","namespace":"ns","summary":"s","speedup":1.2})", "repeats line 1"},
  };
  for (const Case& c : cases) {
    std::string jsonl = absl::StrCat(good, "\n\n", c.bad_line, "\n");
    auto counts = ImportExperiences(memory.store(), memory.metrics(), jsonl);
    EXPECT_EQ(counts.status().code(), absl::StatusCode::kInvalidArgument) << c.bad_line;
    EXPECT_THAT(std::string(counts.status().message()), HasSubstr("line 3: ")) << c.bad_line;
    EXPECT_THAT(std::string(counts.status().message()), HasSubstr(c.expected)) << c.bad_line;
    EXPECT_THAT(std::string(counts.status().message()), Not(HasSubstr("\n"))) << c.bad_line;
  }
  EXPECT_EQ(memory.store()->Count(), 0) << "nothing of a rejected import is stored";
}

TEST(ExperienceTransferTest, ImportRejectsTextOverTheSizeLimitNamingIt) {
  Memory memory("memory");
  std::string huge(kMaxImportBytes + 1, ' ');
  auto counts = ImportExperiences(memory.store(), memory.metrics(), huge);
  EXPECT_EQ(counts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(counts.status().message()), HasSubstr("8 MiB"));
}

TEST(ExperienceTransferTest, ListAndExportOneNamespace) {
  Memory memory("memory");
  FillTwoNamespaces(memory.store());
  auto shared = ListExperiences(*memory.store(), "shared");
  ASSERT_TRUE(shared.ok());
  ASSERT_EQ(shared->size(), 1u);
  EXPECT_EQ((*shared)[0].id(), "e3");
  auto exported = ExportExperiences(*memory.store(), "job-1");
  ASSERT_TRUE(exported.ok());
  EXPECT_EQ(exported->count, 2);
  EXPECT_EQ(ListExperiences(*memory.store(), "a/b").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace accelopt::memory

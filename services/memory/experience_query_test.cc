#include "services/memory/experience_query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::MakeExperience;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Ids(const std::vector<v1::Experience>& experiences) {
  std::vector<std::string> ids;
  for (const auto& e : experiences) ids.push_back(e.id());
  return ids;
}

class ExperienceQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kv = storage::KvStore::Open(scratch_.Path("store"), ExperienceStore::Families());
    ASSERT_TRUE(kv.ok()) << kv.status();
    kv_ = std::move(*kv);
    auto store = ExperienceStore::Open(kv_.get());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  // Stores iterations 1..iterations of `job` in `ns`, `per_iteration` experiences each, with ids
  // "<id_prefix><iteration>.<k>" (ids are unique across namespaces).
  void Fill(const std::string& ns, const std::string& job, int iterations, int per_iteration,
            const std::string& id_prefix = "") {
    for (int it = 1; it <= iterations; ++it) {
      std::vector<v1::Experience> batch;
      for (int k = 0; k < per_iteration; ++k) {
        batch.push_back(MakeExperience(absl::StrCat(id_prefix, it, ".", k), "", job, it));
      }
      ASSERT_TRUE(store_->AppendIteration({ns, job, it}, batch, true).ok());
    }
  }

  std::vector<std::string> Query(const std::string& ns, int capacity, v1::MemoryPolicy policy, uint64_t seed = 0) {
    auto r = QueryExperiences(*store_, {ns, capacity, policy, seed});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Ids(*r) : std::vector<std::string>{};
  }

  accelopt::testing::ScratchDir scratch_;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<ExperienceStore> store_;
};

TEST_F(ExperienceQueryTest, FifoGivesTheNewestCapacityNewestFirst) {
  Fill("job", "job", 3, 2);
  EXPECT_THAT(Query("job", 3, v1::MEMORY_POLICY_FIFO), ElementsAre("3.1", "3.0", "2.1"));
  EXPECT_THAT(Query("job", 3, v1::MEMORY_POLICY_UNSPECIFIED), ElementsAre("3.1", "3.0", "2.1"));
  EXPECT_EQ(Query("job", 100, v1::MEMORY_POLICY_FIFO).size(), 6u);
  EXPECT_TRUE(Query("job", 100, v1::MEMORY_POLICY_OFF).empty());  // ablation: the planner sees nothing
}

TEST_F(ExperienceQueryTest, ZeroCapacityMeansTheDefaultOf16) {
  Fill("job", "job", 10, 2);
  EXPECT_EQ(Query("job", 0, v1::MEMORY_POLICY_FIFO).size(), 16u);
}

TEST_F(ExperienceQueryTest, NamespacesAreSeparateAndUnknownOnesAreEmpty) {
  Fill("a", "job-a", 1, 2, "a");
  Fill("b", "job-b", 1, 1, "b");
  EXPECT_THAT(Query("b", 16, v1::MEMORY_POLICY_FIFO), ElementsAre("b1.0"));
  EXPECT_THAT(Query("nobody", 16, v1::MEMORY_POLICY_FIFO), IsEmpty());
  EXPECT_THAT(Query("nobody", 16, v1::MEMORY_POLICY_RANDOM), IsEmpty());
}

TEST_F(ExperienceQueryTest, RandomKeepsTheNewestBatchInOrderThenSamplesOlderOnes) {
  Fill("job", "job", 6, 3);  // 18 experiences; the newest batch is iteration 6
  std::vector<std::string> got = Query("job", 8, v1::MEMORY_POLICY_RANDOM, 42);
  ASSERT_EQ(got.size(), 8u);
  EXPECT_THAT(std::vector<std::string>(got.begin(), got.begin() + 3), ElementsAre("6.0", "6.1", "6.2"));
  std::set<std::string> older(got.begin() + 3, got.end());
  EXPECT_EQ(older.size(), 5u) << "sampled without replacement";
  for (const std::string& id : older) EXPECT_NE(id[0], '6') << id;
}

TEST_F(ExperienceQueryTest, RandomIsDeterministicForASeedAndVariesAcrossSeeds) {
  Fill("job", "job", 20, 2);
  std::vector<std::string> first = Query("job", 10, v1::MEMORY_POLICY_RANDOM, 7);
  EXPECT_EQ(Query("job", 10, v1::MEMORY_POLICY_RANDOM, 7), first);
  bool differs = false;
  for (uint64_t seed = 8; seed < 16 && !differs; ++seed) {
    differs = Query("job", 10, v1::MEMORY_POLICY_RANDOM, seed) != first;
  }
  EXPECT_TRUE(differs);
}

TEST_F(ExperienceQueryTest, RandomReturnsEverythingWhenFewerThanCapacity) {
  Fill("job", "job", 2, 2);
  std::vector<std::string> got = Query("job", 16, v1::MEMORY_POLICY_RANDOM, 1);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(got.begin(), got.begin() + 2), ElementsAre("2.0", "2.1"));
  EXPECT_EQ(std::set<std::string>(got.begin() + 2, got.end()), (std::set<std::string>{"1.0", "1.1"}));
}

TEST_F(ExperienceQueryTest, RandomKeepsAWholeNewestBatchLargerThanCapacity) {
  Fill("job", "job", 2, 5);
  EXPECT_THAT(Query("job", 3, v1::MEMORY_POLICY_RANDOM, 1), ElementsAre("2.0", "2.1", "2.2", "2.3", "2.4"));
}

TEST_F(ExperienceQueryTest, RandomSamplesUniformly) {
  Fill("job", "job", 11, 1);  // batch "11.0" and 10 older experiences
  std::map<std::string, int> hits;
  const int kRuns = 2000;
  for (uint64_t seed = 0; seed < kRuns; ++seed) {
    std::vector<std::string> got = Query("job", 3, v1::MEMORY_POLICY_RANDOM, seed);
    ASSERT_EQ(got.size(), 3u);
    for (size_t i = 1; i < got.size(); ++i) ++hits[got[i]];
  }
  ASSERT_EQ(hits.size(), 10u);
  // Each older experience is expected 2000 * 2 / 10 = 400 times; allow a wide margin.
  for (const auto& [id, n] : hits) {
    EXPECT_GT(n, 300) << id;
    EXPECT_LT(n, 500) << id;
  }
}

TEST_F(ExperienceQueryTest, RejectsBadParametersNamingTheField) {
  auto r = QueryExperiences(*store_, {"", 4, v1::MEMORY_POLICY_FIFO, 0});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("namespace"));
  r = QueryExperiences(*store_, {"ns", -1, v1::MEMORY_POLICY_FIFO, 0});
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("capacity"));
  r = QueryExperiences(*store_, {"ns", 1, static_cast<v1::MemoryPolicy>(9), 0});
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("policy"));
}

}  // namespace
}  // namespace accelopt::memory

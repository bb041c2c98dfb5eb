#include "services/memory/experience_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::MakeExperience;
using ::testing::ElementsAre;

std::vector<std::string> Ids(const std::vector<v1::Experience>& experiences) {
  std::vector<std::string> ids;
  for (const auto& e : experiences) ids.push_back(e.id());
  return ids;
}

class ExperienceStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    store_.reset();
    kv_.reset();
    auto kv = storage::KvStore::Open(dir_, ExperienceStore::Families());
    ASSERT_TRUE(kv.ok()) << kv.status();
    kv_ = std::move(*kv);
    auto store = ExperienceStore::Open(kv_.get());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  std::vector<v1::Experience> All(const std::string& ns) {
    std::vector<v1::Experience> out;
    EXPECT_TRUE(store_
                    ->ForEach(ns,
                              [&](const v1::Experience& e) {
                                out.push_back(e);
                                return true;
                              })
                    .ok());
    return out;
  }

  accelopt::testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.Path("store");
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<ExperienceStore> store_;
};

TEST_F(ExperienceStoreTest, AppendAssignsSequencesPerNamespaceAndSurvivesReopen) {
  IterationKey a{"job-a", "job-a", 1};
  auto r =
      store_->AppendIteration(a, {MakeExperience("x1", "", "job-a", 1), MakeExperience("x2", "", "job-a", 1)}, true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->written, 2);
  EXPECT_EQ(r->experiences[0].sequence(), 1);
  EXPECT_EQ(r->experiences[1].sequence(), 2);
  EXPECT_EQ(r->experiences[1].namespace_(), "job-a");
  ASSERT_TRUE(store_->AppendIteration({"shared", "job-a", 1}, {MakeExperience("y1", "", "job-a", 1)}, true).ok());
  ASSERT_TRUE(store_->AppendIteration({"job-a", "job-a", 2}, {MakeExperience("x3", "", "job-a", 2)}, true).ok());

  Reopen();
  EXPECT_EQ(store_->Count(), 4);
  EXPECT_THAT(store_->Namespaces(), ElementsAre("job-a", "shared"));
  EXPECT_THAT(store_->Sequences("job-a"), ElementsAre(1, 2, 3));
  EXPECT_THAT(Ids(All("job-a")), ElementsAre("x1", "x2", "x3"));
  EXPECT_THAT(Ids(All("")), ElementsAre("x1", "x2", "x3", "y1"));
  auto found = store_->FindById("shared", "y1");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->namespace_(), "shared");
  EXPECT_EQ((*found)->sequence(), 1);
  EXPECT_EQ((*found)->provenance().job_id(), "job-a");
  auto next = store_->AppendIteration({"job-a", "job-a", 3}, {MakeExperience("x4", "", "job-a", 3)}, true);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->experiences[0].sequence(), 4);
}

TEST_F(ExperienceStoreTest, ACompletedIterationIsNeverWrittenTwice) {
  IterationKey key{"ns", "job", 4};
  ASSERT_TRUE(store_->AppendIteration(key, {MakeExperience("e1", "", "job", 4)}, true).ok());
  auto again =
      store_->AppendIteration(key, {MakeExperience("e1", "", "job", 4), MakeExperience("e2", "", "job", 4)}, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->written, 0);
  EXPECT_THAT(Ids(again->experiences), ElementsAre("e1"));
  EXPECT_EQ(store_->Count(), 1);
  auto completed = store_->CompletedIteration(key);
  ASSERT_TRUE(completed.ok());
  ASSERT_TRUE(completed->has_value());
  EXPECT_THAT(Ids(**completed), ElementsAre("e1"));
}

TEST_F(ExperienceStoreTest, AnIncompleteIterationReusesStoredIdsAndMarksCompletionLater) {
  IterationKey key{"ns", "job", 1};
  ASSERT_TRUE(store_->AppendIteration(key, {MakeExperience("e1", "", "job", 1)}, false).ok());
  auto marker = store_->CompletedIteration(key);
  ASSERT_TRUE(marker.ok());
  EXPECT_FALSE(marker->has_value());

  auto retry =
      store_->AppendIteration(key, {MakeExperience("e1", "", "job", 1), MakeExperience("e2", "", "job", 1)}, true);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->written, 1);
  EXPECT_THAT(Ids(retry->experiences), ElementsAre("e1", "e2"));
  EXPECT_EQ(retry->experiences[0].sequence(), 1);
  EXPECT_EQ(retry->experiences[1].sequence(), 2);
  EXPECT_EQ(store_->Count(), 2);
  auto completed = store_->CompletedIteration(key);
  ASSERT_TRUE(completed.ok());
  ASSERT_TRUE(completed->has_value());
  EXPECT_THAT(Ids(**completed), ElementsAre("e1", "e2"));
}

TEST_F(ExperienceStoreTest, AnEmptyCompletedIterationIsRemembered) {
  IterationKey key{"ns", "job", 0};
  ASSERT_TRUE(store_->AppendIteration(key, {}, true).ok());
  auto completed = store_->CompletedIteration(key);
  ASSERT_TRUE(completed.ok());
  ASSERT_TRUE(completed->has_value());
  EXPECT_TRUE((*completed)->empty());
}

TEST_F(ExperienceStoreTest, ImportKeepsIdsNamespacesProvenanceAndFreeSequences) {
  v1::Experience a = MakeExperience("a", "team", "job-1", 2);
  a.set_sequence(7);
  v1::Experience b = MakeExperience("b", "team", "job-2", 3);
  b.set_sequence(7);  // taken by `a` in the same import: appended after the newest
  v1::Experience c = MakeExperience("c", "other", "job-1", 1);
  auto result = store_->Import({a, b, c});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->written.size(), 3u);
  EXPECT_EQ(result->skipped, 0);
  Reopen();
  std::vector<v1::Experience> team = All("team");
  ASSERT_EQ(team.size(), 2u);
  EXPECT_EQ(team[0].id(), "a");
  EXPECT_EQ(team[0].sequence(), 7);
  EXPECT_EQ(team[0].provenance().job_id(), "job-1");
  EXPECT_EQ(team[1].id(), "b");
  EXPECT_EQ(team[1].sequence(), 8);
  EXPECT_EQ(All("other")[0].sequence(), 1);

  auto again = store_->Import({a, MakeExperience("d", "team", "job-3", 1)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->written.size(), 1u);
  EXPECT_EQ(again->skipped, 1);
  EXPECT_EQ(again->written[0].sequence(), 9);
}

TEST_F(ExperienceStoreTest, AnIdIsUniqueWithinItsNamespaceOnly) {
  // one tenant's ids neither reveal nor block another's: both imports are written, each found in its namespace
  auto alice = store_->Import({MakeExperience("shared-id", "alice", "job-1", 1)});
  ASSERT_TRUE(alice.ok()) << alice.status();
  auto bob = store_->Import({MakeExperience("shared-id", "bob", "job-2", 1)});
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ(bob->written.size(), 1u);
  EXPECT_EQ(bob->skipped, 0);
  Reopen();
  for (const std::string ns : {"alice", "bob"}) {
    auto found = store_->FindById(ns, "shared-id");
    ASSERT_TRUE(found.ok() && found->has_value()) << ns;
    EXPECT_EQ((*found)->namespace_(), ns);
  }
  auto missing = store_->FindById("carol", "shared-id");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(ExperienceStoreTest, OpenMovesTheEarlierGlobalIdIndexUnderNamespaces) {
  // a store written when ids were indexed across namespaces ("id/<id>" -> experience key)
  ASSERT_TRUE(store_->Import({MakeExperience("old", "team", "job-1", 1)}).ok());
  storage::WriteBatch earlier;
  earlier.Delete(ExperienceStore::kIndexFamily, "nsid/team/old");
  earlier.Put(ExperienceStore::kIndexFamily, "id/old", absl::StrFormat("team/%020d", 1));
  ASSERT_TRUE(kv_->Write(std::move(earlier)).ok());
  Reopen();
  auto found = store_->FindById("team", "old");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->id(), "old");
  EXPECT_TRUE(absl::IsNotFound(kv_->Get(ExperienceStore::kIndexFamily, "id/old").status()));
  auto again = store_->Import({MakeExperience("old", "team", "job-1", 1)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->skipped, 1);
}

TEST_F(ExperienceStoreTest, GetAndNewestFirst) {
  ASSERT_TRUE(
      store_
          ->AppendIteration(
              {"ns", "j", 1},
              {MakeExperience("1", "", "j", 1), MakeExperience("2", "", "j", 1), MakeExperience("3", "", "j", 1)}, true)
          .ok());
  auto second = store_->Get("ns", 2);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->id(), "2");
  EXPECT_TRUE(absl::IsNotFound(store_->Get("ns", 9).status()));
  std::vector<std::string> newest;
  ASSERT_TRUE(store_
                  ->ForEachNewestFirst("ns",
                                       [&](const v1::Experience& e) {
                                         newest.push_back(e.id());
                                         return newest.size() < 2;
                                       })
                  .ok());
  EXPECT_THAT(newest, ElementsAre("3", "2"));
}

TEST(NamespaceTest, RejectsSlashesControlCharactersAndEmptyNames) {
  EXPECT_TRUE(ValidateNamespace("job-7f3a", "namespace").ok());
  EXPECT_TRUE(ValidateNamespace("team.trn1:shared", "namespace").ok());
  EXPECT_EQ(ValidateNamespace("", "namespace").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ValidateNamespace("a/b", "namespace").message()), ::testing::HasSubstr("namespace"));
  EXPECT_FALSE(ValidateNamespace("a\nb", "namespace").ok());
  EXPECT_FALSE(ValidateNamespace(std::string(300, 'x'), "namespace").ok());
}

}  // namespace
}  // namespace accelopt::memory

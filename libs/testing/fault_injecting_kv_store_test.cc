#include "libs/testing/fault_injecting_kv_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "libs/storage/rocks_kv_store.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::testing {
namespace {

class FaultInjectingKvStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto base = storage::RocksKvStore::Open(scratch_.Path("store"), {"f"});
    ASSERT_TRUE(base.ok()) << base.status();
    base_ = *std::move(base);
  }

  ScratchDir scratch_;
  std::unique_ptr<storage::RocksKvStore> base_;
};

TEST_F(FaultInjectingKvStoreTest, FailsOnlyTheNthWriteWhichNeverReachesTheStore) {
  FaultInjectingKvStore store(base_.get());
  store.FailNthWrite(2, absl::UnavailableError("disk full"));
  EXPECT_TRUE(store.Put("f", "a", "1").ok());
  absl::Status failed = store.Put("f", "b", "2");
  EXPECT_TRUE(absl::IsUnavailable(failed));
  EXPECT_EQ(failed.message(), "disk full");
  EXPECT_TRUE(store.Put("f", "c", "3").ok());
  EXPECT_EQ(*base_->Get("f", "a"), "1");
  EXPECT_TRUE(absl::IsNotFound(base_->Get("f", "b").status()));
  EXPECT_EQ(*store.Get("f", "c"), "3");
  EXPECT_EQ(store.writes(), 3);
  EXPECT_EQ(store.failed_writes(), std::vector<int>{2});
}

TEST_F(FaultInjectingKvStoreTest, CanFailEveryWriteFromTheNthOnUntilHealed) {
  FaultInjectingKvStore store(base_.get());
  store.FailNthWrite(2, absl::DataLossError("io"), /*and_every_later_one=*/true);
  EXPECT_TRUE(store.Put("f", "a", "1").ok());
  EXPECT_FALSE(store.Put("f", "b", "2").ok());
  EXPECT_FALSE(store.Delete("f", "a").ok());
  store.Heal();
  EXPECT_TRUE(store.Put("f", "d", "4").ok());
  EXPECT_EQ(store.failed_writes(), (std::vector<int>{2, 3}));
  EXPECT_EQ(*base_->Get("f", "a"), "1");
}

TEST_F(FaultInjectingKvStoreTest, FailsWritesMatchingAPredicateOnTheBatch) {
  FaultInjectingKvStore store(base_.get());
  store.FailWritesMatching(
      [](int, const storage::WriteBatch& batch) {
        for (const auto& op : batch.ops()) {
          if (op.key == "poison") return true;
        }
        return false;
      },
      absl::InternalError("bad key"));
  storage::WriteBatch batch;
  batch.Put("f", "fine", "1");
  batch.Put("f", "poison", "2");
  EXPECT_EQ(store.Write(std::move(batch)).code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(absl::IsNotFound(base_->Get("f", "fine").status()));
  EXPECT_TRUE(store.Put("f", "fine", "1").ok());
  std::vector<std::string> keys;
  ASSERT_TRUE(store
                  .Scan("f", "",
                        [&](absl::string_view k, absl::string_view) {
                          keys.emplace_back(k);
                          return true;
                        })
                  .ok());
  EXPECT_EQ(keys, std::vector<std::string>{"fine"});
}

}  // namespace
}  // namespace accelopt::testing

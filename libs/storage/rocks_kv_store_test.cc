#include "libs/storage/rocks_kv_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "libs/testing/scratch_dir.h"

namespace accelopt::storage {
namespace {

TEST(RocksKvStoreTest, PutGetDeleteAcrossFamilies) {
  testing::ScratchDir scratch;
  auto store = RocksKvStore::Open(scratch.Path("store"), {"jobs", "events"});
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Put("jobs", "j1", "a").ok());
  ASSERT_TRUE((*store)->Put("events", "j1", "b").ok());
  EXPECT_EQ(*(*store)->Get("jobs", "j1"), "a");
  EXPECT_EQ(*(*store)->Get("events", "j1"), "b");
  ASSERT_TRUE((*store)->Delete("jobs", "j1").ok());
  EXPECT_EQ((*store)->Get("jobs", "j1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*store)->Get("nope", "j1").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RocksKvStoreTest, BatchIsAllOrNothing) {
  testing::ScratchDir scratch;
  auto store = RocksKvStore::Open(scratch.Path("store"), {"a"});
  ASSERT_TRUE(store.ok());
  WriteBatch bad;
  bad.Put("a", "k1", "v1");
  bad.Put("missing", "k2", "v2");
  EXPECT_FALSE((*store)->Write(std::move(bad)).ok());
  EXPECT_EQ((*store)->Get("a", "k1").status().code(), absl::StatusCode::kNotFound);
  WriteBatch good;
  good.Put("a", "k1", "v1");
  good.Put("a", "k2", "v2");
  ASSERT_TRUE((*store)->Write(std::move(good)).ok());
  EXPECT_EQ(*(*store)->Get("a", "k2"), "v2");
}

TEST(RocksKvStoreTest, ScansByPrefixForwardAndBackward) {
  testing::ScratchDir scratch;
  auto store = RocksKvStore::Open(scratch.Path("store"), {"c"});
  ASSERT_TRUE(store.ok());
  for (const char* k : {"j1/001", "j1/002", "j1/003", "j2/001"}) ASSERT_TRUE((*store)->Put("c", k, k).ok());
  std::vector<std::string> keys;
  ASSERT_TRUE((*store)
                  ->Scan("c", "j1/",
                         [&](auto k, auto) {
                           keys.emplace_back(k);
                           return true;
                         })
                  .ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"j1/001", "j1/002", "j1/003"}));
  keys.clear();
  ASSERT_TRUE((*store)
                  ->ScanReverse("c", "j1/",
                                [&](auto k, auto) {
                                  keys.emplace_back(k);
                                  return keys.size() < 2;
                                })
                  .ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"j1/003", "j1/002"}));
}

TEST(RocksKvStoreTest, DataSurvivesReopen) {
  testing::ScratchDir scratch;
  const std::string dir = scratch.Path("store");
  {
    auto store = RocksKvStore::Open(dir, {"x"});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("x", "k", "v").ok());
  }
  auto store = RocksKvStore::Open(dir, {"x", "y"});
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(*(*store)->Get("x", "k"), "v");
}

}  // namespace
}  // namespace accelopt::storage

#include "libs/storage/store_checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "libs/storage/kv_store.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::storage {
namespace {

class StoreCheckpointTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.path();
};

TEST_F(StoreCheckpointTest, CopiesEveryFamilyWhileTheStoreIsOpenAndWritten) {
  auto live = KvStore::Open(dir_ + "/store", {"jobs", "events"});
  ASSERT_TRUE(live.ok()) << live.status();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*live)->Put("jobs", "job-" + std::to_string(i), "record").ok());
  ASSERT_TRUE((*live)->Put("events", "e1", "started").ok());

  ASSERT_TRUE(CheckpointStore(dir_ + "/store", dir_ + "/backup").ok());
  ASSERT_TRUE((*live)->Put("jobs", "job-after", "record").ok());  // the serving process goes on writing

  auto copy = KvStore::Open(dir_ + "/backup", {"jobs", "events"});
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(*(*copy)->Get("jobs", "job-99"), "record");
  EXPECT_EQ(*(*copy)->Get("events", "e1"), "started");
  EXPECT_EQ((*copy)->Get("jobs", "job-after").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreCheckpointTest, RefusesAMissingStoreAndAnExistingDestination) {
  EXPECT_EQ(CheckpointStore(dir_ + "/none", dir_ + "/backup").code(), absl::StatusCode::kNotFound);
  auto live = KvStore::Open(dir_ + "/store", {"jobs"});
  ASSERT_TRUE(live.ok());
  std::filesystem::create_directories(dir_ + "/taken");
  absl::Status s = CheckpointStore(dir_ + "/store", dir_ + "/taken");
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "checkpoint: '" + dir_ + "/taken' already exists");
}

}  // namespace
}  // namespace accelopt::storage

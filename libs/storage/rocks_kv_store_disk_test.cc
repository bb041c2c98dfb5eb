// RocksKvStore on a real small filesystem (a tmpfs mounted for the test; skipped when mounting is not
// permitted): a full disk is a RESOURCE_EXHAUSTED status and unhealthy store, never an abort, and the store
// resumes by itself once space is freed. Corrupt table files turn the store's health to DATA_LOSS.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "libs/storage/disk_space.h"
#include "libs/storage/rocks_kv_store.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::storage {
namespace {

// A tmpfs of `mib` MiB mounted for the life of the object.
class SmallDisk {
 public:
  explicit SmallDisk(const std::string& name, int mib) : scratch_("kv_disk_" + name), dir_(scratch_.path()) {
    std::string opts = "size=" + std::to_string(mib) + "m";
    mounted_ = mount("tmpfs", dir_.c_str(), "tmpfs", 0, opts.c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  std::string path(const std::string& leaf) const { return dir_ + "/" + leaf; }

  // Takes all but `leave_bytes` of the free space with one file.
  void FillLeaving(uint64_t leave_bytes) {
    uint64_t free = *FreeBytes(dir_);
    int fd = open(path("filler").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    if (free > leave_bytes) {
      ASSERT_EQ(posix_fallocate(fd, 0, static_cast<off_t>(free - leave_bytes)), 0);
    }
    close(fd);
  }
  void Free() { std::filesystem::remove(path("filler")); }

 private:
  testing::ScratchDir scratch_;
  std::string dir_;
  bool mounted_ = false;
};

// Polls `store`'s health until it has `code`; false after 10 s.
bool HealthBecomes(const RocksKvStore& store, absl::StatusCode code) {
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (store.Health().code() == code) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

RocksKvStoreOptions FastProbe(uint64_t reserve) {
  RocksKvStoreOptions options;
  options.reserve_bytes = reserve;
  options.probe_interval = absl::Milliseconds(50);
  return options;
}

TEST(RocksKvStoreDiskTest, BelowTheReserveWritesFailNamingTheDiskAndResumeWhenSpaceFrees) {
  SmallDisk disk("reserve", 16);
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here";
  auto store = RocksKvStore::Open(disk.path("db"), {"jobs"}, FastProbe(4 << 20));
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Put("jobs", "before", "v").ok());
  disk.FillLeaving(1 << 20);

  absl::Status refused = (*store)->Put("jobs", "during", "v");
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_NE(refused.message().find(disk.path("db")), std::string::npos) << refused;
  EXPECT_NE(refused.message().find("bytes free"), std::string::npos) << refused;
  EXPECT_EQ((*store)->Health().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*store)->Get("jobs", "during").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*(*store)->Get("jobs", "before"), "v");

  disk.Free();
  ASSERT_TRUE(HealthBecomes(**store, absl::StatusCode::kOk)) << (*store)->Health();
  ASSERT_TRUE((*store)->Put("jobs", "after", "v").ok());
  EXPECT_EQ(*(*store)->Get("jobs", "after"), "v");
}

TEST(RocksKvStoreDiskTest, AnEnospcInsideRocksDbIsAStatusAndTheStoreResumes) {
  SmallDisk disk("enospc", 16);
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here";
  // No reserve: RocksDB itself meets ENOSPC (WAL appends, flushes) and must not abort.
  auto store = RocksKvStore::Open(disk.path("db"), {"jobs"}, FastProbe(0));
  ASSERT_TRUE(store.ok()) << store.status();
  disk.FillLeaving(256 << 10);
  std::string value(64 << 10, 'x');
  absl::Status failed;
  int written = 0;
  for (; written < 200 && failed.ok(); ++written) failed = (*store)->Put("jobs", "k" + std::to_string(written), value);
  ASSERT_FALSE(failed.ok()) << "the disk never filled";
  EXPECT_EQ(failed.code(), absl::StatusCode::kResourceExhausted) << failed;
  EXPECT_FALSE((*store)->Health().ok());
  EXPECT_EQ(*(*store)->Get("jobs", "k0"), value);

  disk.Free();
  ASSERT_TRUE(HealthBecomes(**store, absl::StatusCode::kOk)) << (*store)->Health();
  ASSERT_TRUE((*store)->Put("jobs", "after", "v").ok()) << (*store)->Health();
  for (int i = 0; i + 1 < written; ++i) EXPECT_TRUE((*store)->Get("jobs", "k" + std::to_string(i)).ok()) << i;
}

TEST(RocksKvStoreDiskTest, ACorruptTableFileTurnsHealthToDataLoss) {
  testing::ScratchDir scratch;
  const std::string dir = scratch.Path("store");
  {
    auto store = RocksKvStore::Open(dir, {"jobs"});
    ASSERT_TRUE(store.ok()) << store.status();
    for (int i = 0; i < 100; ++i) ASSERT_TRUE((*store)->Put("jobs", "k" + std::to_string(i), "value").ok());
  }
  // Reopening recovers the log into a table file.
  { ASSERT_TRUE(RocksKvStore::Open(dir, {"jobs"}).ok()); }
  int corrupted = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".sst") continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.write("garbagegarbagegarbage", 21);
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  RocksKvStoreOptions options = FastProbe(0);
  options.verify_interval = absl::Milliseconds(50);
  auto store = RocksKvStore::Open(dir, {"jobs"}, options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE(HealthBecomes(**store, absl::StatusCode::kDataLoss)) << (*store)->Health();
  EXPECT_NE((*store)->Health().message().find("corrupt"), std::string::npos) << (*store)->Health();
}

}  // namespace
}  // namespace accelopt::storage

#include "libs/sandbox/uid_range.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "libs/testing/scratch_dir.h"

namespace accelopt::sandbox {
namespace {

UidRangeOptions TestOptions(const testing::ScratchDir& lock_dir) {
  UidRangeOptions options;
  options.lock_dir = lock_dir.path();
  options.ranges = 3;
  options.width = 8;
  options.first = 70000;
  return options;
}

TEST(UidRangeTest, TwoHoldersInOneProcessGetDisjointRanges) {
  testing::ScratchDir lock_dir("uid_range_test");
  auto a = UidRange::AcquireAny(TestOptions(lock_dir));
  auto b = UidRange::AcquireAny(TestOptions(lock_dir));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->base(), 70000);
  EXPECT_EQ(b->base(), 70008);
  EXPECT_EQ(b->uid(3), 70011);
}

TEST(UidRangeTest, AnotherProcessGetsAnotherRangeWhileTheFirstLives) {
  testing::ScratchDir lock_dir("uid_range_test");
  const UidRangeOptions options = TestOptions(lock_dir);  // one lock directory for both processes
  auto mine = UidRange::AcquireAny(options);
  ASSERT_TRUE(mine.ok()) << mine.status();
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto theirs = UidRange::AcquireAny(options);
    int base = theirs.ok() ? theirs->base() : -1;
    _exit(write(report[1], &base, sizeof base) == sizeof base ? 0 : 1);
  }
  int theirs = 0;
  ASSERT_EQ(read(report[0], &theirs, sizeof theirs), static_cast<ssize_t>(sizeof theirs));
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(mine->base(), 70000);
  EXPECT_EQ(theirs, 70008);
}

TEST(UidRangeTest, ReleasedOnDestructionAndAllTakenIsExhausted) {
  testing::ScratchDir lock_dir("uid_range_test");
  UidRangeOptions options = TestOptions(lock_dir);
  {
    auto a = UidRange::AcquireAny(options), b = UidRange::AcquireAny(options), c = UidRange::AcquireAny(options);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ(UidRange::AcquireAny(options).status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(UidRange::AcquireAt(70008, options).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  auto again = UidRange::AcquireAt(70008, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->base(), 70008);
}

}  // namespace
}  // namespace accelopt::sandbox

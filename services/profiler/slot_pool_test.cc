#include "services/profiler/slot_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "absl/synchronization/notification.h"

namespace accelopt::profiler {
namespace {

TEST(SlotPoolTest, RunsOnFreeSlotsQueuesUpToTheLimitThenRefuses) {
  absl::Notification release;
  std::atomic<int> started{0};
  SlotPool pool(/*slots=*/2, /*queue_limit=*/1);
  auto blocker = [&](int) {
    started++;
    release.WaitForNotification();
  };
  ASSERT_TRUE(pool.Submit(blocker).ok());
  ASSERT_TRUE(pool.Submit(blocker).ok());
  while (started.load() < 2) std::this_thread::yield();
  ASSERT_TRUE(pool.Submit(blocker).ok());  // queued
  SlotPool::Stats stats = pool.stats();
  EXPECT_EQ(stats.busy, 2);
  EXPECT_EQ(stats.queued, 1);
  absl::Status full = pool.Submit(blocker);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("queue limit 1"), std::string::npos) << full;
  release.Notify();
}

TEST(SlotPoolTest, EachRunningTaskHasItsOwnSlot) {
  absl::Notification release;
  std::mutex mu;
  std::set<int> slots;
  std::atomic<int> started{0};
  {
    SlotPool pool(3, 0);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(pool.Submit([&](int slot) {
                        {
                          std::lock_guard<std::mutex> lock(mu);
                          slots.insert(slot);
                        }
                        started++;
                        release.WaitForNotification();
                      })
                      .ok());
    }
    while (started.load() < 3) std::this_thread::yield();
    release.Notify();
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2}));
}

TEST(SlotPoolTest, OnSlotFreedSeesTheSlotFreeAfterEachTask) {
  std::mutex mu;
  std::vector<int> busy_seen;
  SlotPool* pool_ptr = nullptr;
  absl::Notification ready;
  {
    SlotPool pool(/*slots=*/1, /*queue_limit=*/4, [&] {
      ready.WaitForNotification();
      int busy = pool_ptr->stats().busy;
      std::lock_guard<std::mutex> lock(mu);
      busy_seen.push_back(busy);
    });
    pool_ptr = &pool;
    ready.Notify();
    ASSERT_TRUE(pool.Submit([](int) {}).ok());
    ASSERT_TRUE(pool.Submit([](int) {}).ok());
  }  // the destructor runs both tasks and their callbacks
  EXPECT_EQ(busy_seen, std::vector<int>({0, 0}));
}

}  // namespace
}  // namespace accelopt::profiler

#include "services/orchestrator/profile_queues.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace accelopt::orchestrator {
namespace {

const auto kAll = [](const std::string&) { return true; };

std::vector<std::string> Drain(ProfileQueues& queues, const std::function<bool(const std::string&)>& eligible) {
  std::vector<std::string> order;
  while (auto next = queues.Pop(eligible)) order.push_back(next->job_id + ":" + next->candidate_id);
  return order;
}

TEST(ProfileQueuesTest, ServesJobsRoundRobinAndEachJobInOrder) {
  ProfileQueues queues;
  const absl::Time t0 = absl::UnixEpoch();
  for (const char* c : {"a1", "a2", "a3", "a4"}) queues.Push("job-a", c, t0);
  queues.Push("job-b", "b1", t0);
  queues.Push("job-b", "b2", t0);
  queues.Push("job-c", "c1", t0);
  EXPECT_EQ(queues.size(), 7u);
  EXPECT_EQ(Drain(queues, kAll), (std::vector<std::string>{"job-a:a1", "job-b:b1", "job-c:c1", "job-a:a2", "job-b:b2",
                                                           "job-a:a3", "job-a:a4"}));
  EXPECT_EQ(queues.size(), 0u);
}

TEST(ProfileQueuesTest, ResumesAfterTheJobServedLastWhenNewWorkArrives) {
  ProfileQueues queues;
  const absl::Time t0 = absl::UnixEpoch();
  queues.Push("job-a", "a1", t0);
  queues.Push("job-b", "b1", t0);
  ASSERT_EQ(queues.Pop(kAll)->job_id, "job-a");
  queues.Push("job-a", "a2", t0);
  // job-a was served last, so job-b goes first even though job-a sorts before it.
  EXPECT_EQ(queues.Pop(kAll)->job_id, "job-b");
  EXPECT_EQ(queues.Pop(kAll)->job_id, "job-a");
}

TEST(ProfileQueuesTest, SkipsIneligibleJobsAndKeepsTheirWork) {
  ProfileQueues queues;
  const absl::Time t0 = absl::UnixEpoch();
  queues.Push("job-a", "a1", t0);
  queues.Push("job-b", "b1", t0 + absl::Seconds(3));
  auto only_b = [](const std::string& job) { return job == "job-b"; };
  auto next = queues.Pop(only_b);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->candidate_id, "b1");
  EXPECT_EQ(next->since, t0 + absl::Seconds(3));
  EXPECT_FALSE(queues.Pop(only_b).has_value());
  EXPECT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues.Pop(kAll)->candidate_id, "a1");
}

TEST(ProfileQueuesTest, DropForgetsAStoppedJobsQueue) {
  ProfileQueues queues;
  const absl::Time t0 = absl::UnixEpoch();
  queues.Push("job-a", "a1", t0);
  queues.Push("job-a", "a2", t0);
  queues.Push("job-b", "b1", t0);
  queues.Drop("job-a");
  queues.Drop("job-unknown");
  EXPECT_EQ(queues.size(), 1u);
  EXPECT_EQ(Drain(queues, kAll), std::vector<std::string>{"job-b:b1"});
}

}  // namespace
}  // namespace accelopt::orchestrator

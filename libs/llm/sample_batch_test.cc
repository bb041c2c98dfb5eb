#include "libs/llm/sample_batch.h"

#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "accelopt/v1/executor_service.pb.h"
#include "accelopt/v1/planner_service.pb.h"

namespace accelopt::llm {
namespace {

v1::TokenUsage Usage(int prompt, int completion) {
  v1::TokenUsage u;
  u.set_prompt_tokens(prompt);
  u.set_completion_tokens(completion);
  return u;
}

TEST(SampleBatchTest, TheLastRecordHandsOverEverySampleAndTheUsageTotal) {
  std::optional<v1::PlanResponse> delivered;
  auto batch = SampleBatch<v1::PlanResponse>::Create(3, [&](v1::PlanResponse r) { delivered = std::move(r); });
  batch->Record(2, Usage(1, 2), [](v1::PlanSample& s) { s.mutable_plan()->set_text("third"); });
  batch->Record(0, Usage(10, 20), [](v1::PlanSample& s) { s.set_error("model down"); });
  EXPECT_FALSE(delivered.has_value());
  batch->Record(1, Usage(100, 200), [](v1::PlanSample& s) { s.mutable_plan()->set_text("second"); });
  ASSERT_TRUE(delivered.has_value());
  ASSERT_EQ(delivered->samples_size(), 3);
  EXPECT_EQ(delivered->samples(0).error(), "model down");
  EXPECT_EQ(delivered->samples(1).plan().text(), "second");
  EXPECT_EQ(delivered->samples(2).plan().text(), "third");
  EXPECT_EQ(delivered->samples(1).usage().prompt_tokens(), 100);
  EXPECT_EQ(delivered->usage().prompt_tokens(), 111);
  EXPECT_EQ(delivered->usage().completion_tokens(), 222);
}

TEST(SampleBatchTest, TheResponseNamesThePromptSetWhenThereIsOne) {
  v1::PromptSetUsed used;
  used.set_name("paper");
  used.set_sha256(std::string(64, 'a'));
  std::optional<v1::ImplementResponse> with, without;
  SampleBatch<v1::ImplementResponse>::Create(
      1, [&](v1::ImplementResponse r) { with = std::move(r); }, used)
      ->Record(0, Usage(1, 1), [](v1::KernelSample&) {});
  SampleBatch<v1::ImplementResponse>::Create(1, [&](v1::ImplementResponse r) {
    without = std::move(r);
  })->Record(0, Usage(1, 1), [](v1::KernelSample&) {});
  ASSERT_TRUE(with.has_value() && without.has_value());
  EXPECT_EQ(with->prompts().name(), "paper");
  EXPECT_EQ(with->prompts().sha256(), used.sha256());
  EXPECT_FALSE(without->has_prompts());
}

TEST(SampleBatchTest, SamplesFromManyThreadsCompleteTheCallOnce) {
  constexpr int kSamples = 16;
  absl::Notification done;
  int calls = 0;
  v1::PlanResponse delivered;
  auto batch = SampleBatch<v1::PlanResponse>::Create(kSamples, [&](v1::PlanResponse r) {
    ++calls;
    delivered = std::move(r);
    done.Notify();
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < kSamples; ++i) {
    threads.emplace_back([batch, i] {
      batch->Record(i, Usage(1, i), [i](v1::PlanSample& s) { s.mutable_plan()->set_title(std::to_string(i)); });
    });
  }
  done.WaitForNotification();
  for (auto& t : threads) t.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(delivered.usage().prompt_tokens(), kSamples);
  for (int i = 0; i < kSamples; ++i) EXPECT_EQ(delivered.samples(i).plan().title(), std::to_string(i));
}

}  // namespace
}  // namespace accelopt::llm

#include "services/memory/prompted_summarizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "libs/config/llm_config.h"
#include "libs/llm/openai_client.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/iteration_summarizer.h"
#include "services/memory/memory_test_util.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::memory {
namespace {

using ::accelopt::testing::DoubleReply;
using ::accelopt::testing::DoubleScript;
using ::accelopt::testing::LlmDouble;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAnswer[] =
    "**Hoist the weight load out of the row loop**\n"
    "The weights do not depend on the row, so load them once into SBUF before the loop.\n"
    "This removes 31 of 32 HBM reads.\n"
    "Original code:\n"
    "```python\n"
    "for i in nl.affine_range(32):\n"
    "    w = nl.load(weights)\n"
    "```\n"
    "Optimized code:\n"
    "```python\n"
    "w = nl.load(weights)\n"
    "for i in nl.affine_range(32):\n"
    "```\n";

TEST(ParseSummaryAnswerTest, ReadsTitleDescriptionSnippetsAndSummary) {
  SummaryOutput out = ParseSummaryAnswer(kAnswer);
  EXPECT_FALSE(out.no_optimization);
  EXPECT_EQ(out.title, "Hoist the weight load out of the row loop");
  EXPECT_EQ(out.description,
            "The weights do not depend on the row, so load them once into SBUF before the loop.\n"
            "This removes 31 of 32 HBM reads.");
  EXPECT_EQ(out.before_snippet, "for i in nl.affine_range(32):\n    w = nl.load(weights)");
  EXPECT_EQ(out.after_snippet, "w = nl.load(weights)\nfor i in nl.affine_range(32):");
  EXPECT_EQ(out.summary, std::string(kAnswer).substr(0, std::string(kAnswer).size() - 1));
}

TEST(ParseSummaryAnswerTest, NoOptimizationFoundAnywhereIsANoOp) {
  EXPECT_TRUE(ParseSummaryAnswer("No optimization found").no_optimization);
  EXPECT_TRUE(ParseSummaryAnswer("The kernels are identical.\n\nNo optimization found.").no_optimization);
}

TEST(ParseSummaryAnswerTest, AnswerWithoutSnippetsKeepsItsText) {
  SummaryOutput out = ParseSummaryAnswer("Use larger tiles\nBigger tiles amortize DMA setup.");
  EXPECT_EQ(out.title, "Use larger tiles");
  EXPECT_EQ(out.description, "Bigger tiles amortize DMA setup.");
  EXPECT_TRUE(out.before_snippet.empty());
  EXPECT_TRUE(out.after_snippet.empty());
}

// The summarizer over the real OpenAI-compatible client, talking HTTP to the LLM double.
class PromptedSummarizerTest : public ::testing::Test {
 protected:
  void Start(DoubleScript script) {
    auto d = LlmDouble::Start(std::move(script), LlmDouble::Options());
    ASSERT_TRUE(d.ok()) << d.status();
    double_ = *std::move(d);
    v1::LlmConfig config;
    config.set_max_attempts(2);
    config.set_initial_backoff_seconds(0.001);
    config.set_max_backoff_seconds(0.01);
    config::ApplyLlmDefaults(&config);
    *config.add_endpoints() = double_->Endpoint({"summarizer-model"});
    llm::OpenAiClient::Options options;
    options.config = config;
    options.registry = std::make_shared<prometheus::Registry>();
    auto client = llm::OpenAiClient::Create(std::move(options));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    summarizer_ = std::make_unique<PromptedSummarizer>(*client_, prompts_);
  }

  SummaryInput Input() const {
    SummaryInput input;
    input.slow_kernel = "def kernel(x):\n    return slow(x)\n";
    input.fast_kernel = "def kernel(x):\n    return fast(x)\n";
    input.speedup = 2.0;
    input.regression = true;
    input.model.set_provider("openai");
    input.model.set_model("summarizer-model");
    input.seed = 99;
    return input;
  }

  SummaryAnswer Summarize(const SummaryInput& input) {
    absl::Notification done;
    SummaryAnswer answer;
    summarizer_->Summarize(input, [&](SummaryAnswer a) {
      answer = std::move(a);
      done.Notify();
    });
    done.WaitForNotification();
    return answer;
  }

  static DoubleScript Replying(const std::string& content, int status = 200) {
    DoubleScript script;
    script.fallback.status = status;
    script.fallback.content = content;
    script.fallback.prompt_tokens = 120;
    script.fallback.completion_tokens = 40;
    return script;
  }

  llm::PromptLibrary prompts_{ACCELOPT_SOURCE_DIR "/prompts"};
  std::unique_ptr<LlmDouble> double_;
  std::unique_ptr<llm::OpenAiClient> client_;
  std::unique_ptr<PromptedSummarizer> summarizer_;
};

TEST_F(PromptedSummarizerTest, RendersEveryPlaceholderAndReadsTheAnswer) {
  Start(Replying(kAnswer));
  SummaryAnswer answer = Summarize(Input());
  ASSERT_TRUE(answer.summary.ok()) << answer.summary.status();
  EXPECT_EQ(answer.summary->title, "Hoist the weight load out of the row loop");
  EXPECT_EQ(answer.summary->model, "summarizer-model");
  EXPECT_EQ(answer.usage.prompt_tokens(), 120);
  EXPECT_EQ(answer.usage.completion_tokens(), 40);
  EXPECT_EQ(answer.usage.requests(), 1);

  std::vector<accelopt::testing::RecordedRequest> seen = double_->Requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].model, "summarizer-model");
  EXPECT_EQ(seen[0].seed, 99);
  EXPECT_THAT(seen[0].system, HasSubstr("No optimization found"));
  EXPECT_THAT(seen[0].user, HasSubstr("return slow(x)"));
  EXPECT_THAT(seen[0].user, HasSubstr("return fast(x)"));
  EXPECT_THAT(seen[0].user, HasSubstr("2.000x"));
  EXPECT_LT(seen[0].user.find("return slow(x)"), seen[0].user.find("return fast(x)"));
  EXPECT_THAT(seen[0].user, Not(HasSubstr("{{")));
  EXPECT_THAT(seen[0].system, Not(HasSubstr("{{")));
}

TEST_F(PromptedSummarizerTest, NoOptimizationFound) {
  Start(Replying("No optimization found"));
  SummaryAnswer answer = Summarize(Input());
  ASSERT_TRUE(answer.summary.ok()) << answer.summary.status();
  EXPECT_TRUE(answer.summary->no_optimization);
}

TEST_F(PromptedSummarizerTest, EndpointFailureIsAnErrorWithItsUsage) {
  Start(Replying("", 503));
  SummaryAnswer answer = Summarize(Input());
  EXPECT_EQ(answer.summary.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(answer.usage.requests(), 2);
  EXPECT_EQ(answer.usage.retries(), 1);
}

TEST_F(PromptedSummarizerTest, ValidatesTheSpecNamingTheField) {
  Start(Replying(kAnswer));
  v1::ModelSpec spec = Input().model;
  EXPECT_TRUE(summarizer_->ValidateSpec(spec).ok());
  spec.set_model("unlisted-model");
  EXPECT_THAT(std::string(summarizer_->ValidateSpec(spec).message()), HasSubstr("model.model"));
  spec = Input().model;
  spec.set_prompt_set("missing-set");
  EXPECT_THAT(std::string(summarizer_->ValidateSpec(spec).message()), HasSubstr("model.prompt_set"));
}

TEST_F(PromptedSummarizerTest, AnIterationSummarizedThroughTheDoubleIsStored) {
  DoubleScript script = Replying(kAnswer);
  accelopt::testing::DoubleRule same;
  same.match = "same(x)";
  same.reply.content = "No optimization found";
  script.rules.push_back(same);
  Start(std::move(script));
  accelopt::testing::ScratchDir scratch;
  auto kv = std::move(storage::KvStore::Open(scratch.Path("store"), ExperienceStore::Families()).value());
  auto store = std::move(ExperienceStore::Open(kv.get()).value());
  SummarizerRegistry registry;
  registry.Register("openai", std::make_unique<PromptedSummarizer>(*client_, prompts_));
  prometheus::Registry prometheus;
  MemoryMetrics metrics = MemoryMetrics::Create(prometheus);
  boost::asio::thread_pool pool(2);
  IterationSummarizer iteration(store.get(), &registry, &metrics, &pool);

  v1::SummarizeIterationRequest request = testing::Request("job-7", "job-7", 2);
  *request.mutable_model() = Input().model;
  *request.add_samples() = testing::Sample("c0", 0, 0, 1.5);
  v1::SampleResult same_kernels = testing::Sample("c0", 1, 0, 1.3);
  same_kernels.mutable_parent_kernel()->set_source("def kernel(x):\n    return same(x)\n");
  *request.add_samples() = same_kernels;
  ASSERT_TRUE(ValidateSummarizeRequest(request, registry).ok());
  absl::Notification finished;
  absl::StatusOr<v1::SummarizeIterationResponse> response;
  iteration.Run(request, [&](absl::StatusOr<v1::SummarizeIterationResponse> r) {
    response = std::move(r);
    finished.Notify();
  });
  finished.WaitForNotification();
  pool.join();
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->added_size(), 1);
  const v1::Experience& e = response->added(0);
  EXPECT_EQ(e.title(), "Hoist the weight load out of the row loop");
  EXPECT_EQ(e.after_snippet(), "w = nl.load(weights)\nfor i in nl.affine_range(32):");
  EXPECT_EQ(e.provenance().model(), "summarizer-model");
  EXPECT_DOUBLE_EQ(e.speedup(), 1.5);
  EXPECT_EQ(response->usage().requests(), 2);
  EXPECT_EQ(response->usage().prompt_tokens(), 120);  // the no-op rule reports no tokens
  EXPECT_EQ(store->Count(), 1);
  for (const auto& seen : double_->Requests()) EXPECT_THAT(seen.user, HasSubstr("x as fast"));
}

}  // namespace
}  // namespace accelopt::memory

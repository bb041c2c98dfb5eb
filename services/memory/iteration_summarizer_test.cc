#include "services/memory/iteration_summarizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/fake_summarizer.h"
#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::Request;
using ::accelopt::memory::testing::Sample;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Delegates to FakeSummarizer, records every input, fails pairs whose kernels mention a candidate given to
// FailCandidate, and answers from its own thread when `async`.
class ScriptedSummarizer final : public Summarizer {
 public:
  explicit ScriptedSummarizer(bool async) : async_(async) {}
  ~ScriptedSummarizer() override {
    for (auto& t : threads_) t.join();
  }

  absl::Status ValidateSpec(const v1::ModelSpec& model) const override {
    if (model.model() == "invalid") return absl::InvalidArgumentError("model.model: rejected");
    return absl::OkStatus();
  }

  void Summarize(const SummaryInput& input, SummaryCallback done) override {
    bool fail = false;
    {
      absl::MutexLock lock(&mu_);
      inputs_.push_back(input);
      for (const auto& f : fail_) {
        fail = fail || input.slow_kernel.find(f) != std::string::npos || input.fast_kernel.find(f) != std::string::npos;
      }
    }
    auto answer = [input, fail, done = std::move(done)]() {
      if (fail) {
        SummaryAnswer a;
        a.summary = absl::UnavailableError("endpoint down");
        a.usage.set_requests(3);
        a.usage.set_retries(2);
        done(std::move(a));
        return;
      }
      FakeSummarizer().Summarize(input, done);
    };
    if (!async_) return answer();
    absl::MutexLock lock(&mu_);
    threads_.emplace_back(std::move(answer));
  }

  void FailCandidate(const std::string& candidate) {
    absl::MutexLock lock(&mu_);
    fail_.push_back(candidate);
  }
  void Heal() {
    absl::MutexLock lock(&mu_);
    fail_.clear();
  }
  std::vector<SummaryInput> inputs() {
    absl::MutexLock lock(&mu_);
    return inputs_;
  }

 private:
  const bool async_;
  absl::Mutex mu_;
  std::vector<SummaryInput> inputs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> fail_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

class IterationSummarizerTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto kv = storage::KvStore::Open(scratch_.Path("store"), ExperienceStore::Families());
    ASSERT_TRUE(kv.ok()) << kv.status();
    kv_ = std::move(*kv);
    auto store = ExperienceStore::Open(kv_.get());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto scripted = std::make_unique<ScriptedSummarizer>(GetParam());
    summarizer_ = scripted.get();
    registry_.Register("fake", std::move(scripted));
    iteration_ = std::make_unique<IterationSummarizer>(store_.get(), &registry_, &metrics_, &pool_,
                                                       [] { return absl::FromUnixSeconds(1700000000); });
  }

  void TearDown() override { pool_.join(); }

  absl::StatusOr<v1::SummarizeIterationResponse> Run(const v1::SummarizeIterationRequest& request) {
    EXPECT_TRUE(ValidateSummarizeRequest(request, registry_).ok());
    absl::Notification finished;
    absl::StatusOr<v1::SummarizeIterationResponse> result;
    iteration_->Run(request, [&](absl::StatusOr<v1::SummarizeIterationResponse> r) {
      result = std::move(r);
      finished.Notify();
    });
    finished.WaitForNotification();
    return result;
  }

  // Iteration 3 of job-1: two gains (1.5 and 1.2), one regression (0.5), and one pair whose kernels are
  // identical (a gain of 1.3 the summarizer calls "No optimization found").
  v1::SummarizeIterationRequest ThreePairsAndANoOp() {
    v1::SummarizeIterationRequest r = Request("job-1", "job-1", 3);
    *r.add_samples() = Sample("c0", 0, 0, 1.5);
    *r.add_samples() = Sample("c0", 1, 0, 1.2);
    *r.add_samples() = Sample("c1", 0, 0, 0.5);
    v1::SampleResult same = Sample("c1", 1, 0, 1.3);
    same.mutable_kernel()->set_source(same.parent_kernel().source());
    *r.add_samples() = same;
    return r;
  }

  prometheus::Registry prometheus_;
  MemoryMetrics metrics_ = MemoryMetrics::Create(prometheus_);
  boost::asio::thread_pool pool_{2};
  accelopt::testing::ScratchDir scratch_;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<ExperienceStore> store_;
  SummarizerRegistry registry_;
  ScriptedSummarizer* summarizer_ = nullptr;
  std::unique_ptr<IterationSummarizer> iteration_;
};

TEST_P(IterationSummarizerTest, StoresOneExperiencePerSelectedPairWithProvenance) {
  auto response = Run(ThreePairsAndANoOp());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->failures(), ::testing::IsEmpty());
  ASSERT_EQ(response->added_size(), 3);  // the no-op pair is not stored
  const v1::Experience& best = response->added(0);
  EXPECT_EQ(best.id(), ExperienceId({"job-1", "job-1", 3}, "c0-p0-s0", false));
  EXPECT_EQ(best.namespace_(), "job-1");
  EXPECT_EQ(best.sequence(), 1);
  EXPECT_DOUBLE_EQ(best.speedup(), 1.5);
  EXPECT_FALSE(best.regression());
  EXPECT_EQ(best.title(), "plan 0 of c0");
  EXPECT_THAT(best.summary(), HasSubstr("1.500x faster"));
  EXPECT_EQ(best.provenance().job_id(), "job-1");
  EXPECT_EQ(best.provenance().problem(), "silu");
  EXPECT_EQ(best.provenance().device(), v1::DEVICE_SIM_TRN1);
  EXPECT_EQ(best.provenance().model(), "fake");
  EXPECT_EQ(best.provenance().created_at().seconds(), 1700000000);
  EXPECT_EQ(best.provenance().candidate_id(), "c0-p0-s0");
  EXPECT_EQ(best.provenance().iteration(), 3);
  EXPECT_DOUBLE_EQ(response->added(1).speedup(), 1.2);
  const v1::Experience& regression = response->added(2);
  EXPECT_TRUE(regression.regression());
  EXPECT_DOUBLE_EQ(regression.speedup(), 2.0);
  EXPECT_EQ(regression.provenance().candidate_id(), "c1-p0-s0");
  EXPECT_EQ(response->usage().requests(), 4);
  EXPECT_EQ(store_->Count(), 3);

  // The regression was summarized slow = the new kernel, fast = the parent, with its speedup filled in.
  std::vector<SummaryInput> inputs = summarizer_->inputs();
  ASSERT_EQ(inputs.size(), 4u);
  for (const SummaryInput& in : inputs) {
    if (!in.regression) continue;
    EXPECT_THAT(in.slow_kernel, HasSubstr("c1-p0-s0"));
    EXPECT_THAT(in.fast_kernel, ::testing::Not(HasSubstr("c1-p0-s0")));
    EXPECT_DOUBLE_EQ(in.speedup, 2.0);
    EXPECT_EQ(in.problem, "silu");
  }
}

TEST_P(IterationSummarizerTest, ARetryOfACompletedIterationCallsNoSummarizerAndStoresNothing) {
  auto first = Run(ThreePairsAndANoOp());
  ASSERT_TRUE(first.ok());
  auto retry = Run(ThreePairsAndANoOp());
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(summarizer_->inputs().size(), 4u);
  EXPECT_EQ(store_->Count(), 3);
  ASSERT_EQ(retry->added_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(retry->added(i).id(), first->added(i).id());
}

TEST_P(IterationSummarizerTest, FailedPairsAreReportedAndARetrySummarizesOnlyWhatIsMissing) {
  summarizer_->FailCandidate("c0-p1-s0");
  auto first = Run(ThreePairsAndANoOp());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->failures_size(), 1);
  EXPECT_THAT(first->failures(0), HasSubstr("candidate c0-p1-s0 (plan 1, sample 0)"));
  EXPECT_THAT(first->failures(0), HasSubstr("endpoint down"));
  EXPECT_EQ(first->added_size(), 2);
  EXPECT_EQ(first->usage().requests(), 6);
  EXPECT_EQ(first->usage().retries(), 2);

  summarizer_->Heal();
  auto retry = Run(ThreePairsAndANoOp());
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_THAT(retry->failures(), ::testing::IsEmpty());
  // Only the failed pair and the no-op pair (never stored) are summarized again.
  EXPECT_EQ(summarizer_->inputs().size(), 6u);
  ASSERT_EQ(retry->added_size(), 3);
  EXPECT_EQ(retry->added(0).id(), first->added(0).id());
  EXPECT_EQ(retry->added(1).provenance().candidate_id(), "c0-p1-s0");
  EXPECT_EQ(retry->added(1).sequence(), 3);
  EXPECT_EQ(store_->Count(), 3);
}

TEST_P(IterationSummarizerTest, NothingSelectedStillCompletesTheIteration) {
  v1::SummarizeIterationRequest r = Request("job-1", "shared", 0);
  *r.add_samples() = Sample("c0", 0, 0, 1.0);
  *r.add_samples() = Sample("c0", 1, 0, 1.01);
  auto response = Run(r);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->added_size(), 0);
  EXPECT_TRUE(summarizer_->inputs().empty());
  auto completed = store_->CompletedIteration({"shared", "job-1", 0});
  ASSERT_TRUE(completed.ok());
  EXPECT_TRUE(completed->has_value());
}

TEST_P(IterationSummarizerTest, IterationsAreKeptApartByJobAndIteration) {
  ASSERT_TRUE(Run(ThreePairsAndANoOp()).ok());
  v1::SummarizeIterationRequest next = ThreePairsAndANoOp();
  next.set_iteration(4);
  auto response = Run(next);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->added_size(), 3);
  EXPECT_EQ(response->added(0).sequence(), 4);
  EXPECT_EQ(store_->Count(), 6);
}

INSTANTIATE_TEST_SUITE_P(SyncAndAsyncSummarizers, IterationSummarizerTest, ::testing::Bool());

TEST(ValidateSummarizeRequestTest, NamesTheBadField) {
  SummarizerRegistry registry;
  registry.Register("fake", std::make_unique<FakeSummarizer>());
  auto message = [&](const v1::SummarizeIterationRequest& r) {
    return std::string(ValidateSummarizeRequest(r, registry).message());
  };
  v1::SummarizeIterationRequest good = Request("job", "job", 1);
  EXPECT_TRUE(ValidateSummarizeRequest(good, registry).ok());
  auto r = good;
  r.clear_job_id();
  EXPECT_THAT(message(r), HasSubstr("job_id"));
  r = good;
  r.set_namespace_("a/b");
  EXPECT_THAT(message(r), HasSubstr("namespace"));
  r = good;
  r.set_iteration(-1);
  EXPECT_THAT(message(r), HasSubstr("iteration"));
  r = good;
  r.set_max_experiences(-1);
  EXPECT_THAT(message(r), HasSubstr("max_experiences"));
  r = good;
  r.set_positive_threshold(0.5);
  EXPECT_THAT(message(r), HasSubstr("positive_threshold"));
  r = good;
  r.set_negative_threshold(0.9);
  EXPECT_THAT(message(r), HasSubstr("negative_threshold"));
  r = good;
  r.mutable_model()->set_provider("openai");
  EXPECT_EQ(ValidateSummarizeRequest(r, registry).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(r), HasSubstr("model.provider"));
  EXPECT_THAT(message(r), HasSubstr("fake"));

  // The provider checks the model fields it needs.
  registry.Register("scripted", std::make_unique<ScriptedSummarizer>(false));
  r = good;
  r.mutable_model()->set_provider("scripted");
  r.mutable_model()->set_model("invalid");
  EXPECT_THAT(message(r), HasSubstr("model.model"));
}

TEST(ExperienceIdTest, DependsOnEveryPartOfTheKey) {
  IterationKey key{"ns", "job", 2};
  std::string id = ExperienceId(key, "cand", false);
  EXPECT_EQ(id.size(), 28u);
  EXPECT_EQ(id, ExperienceId(key, "cand", false));
  EXPECT_NE(id, ExperienceId(key, "cand", true));
  EXPECT_NE(id, ExperienceId(key, "cand2", false));
  EXPECT_NE(id, ExperienceId({"ns", "job", 3}, "cand", false));
  EXPECT_NE(id, ExperienceId({"ns2", "job", 2}, "cand", false));
  EXPECT_NE(id, ExperienceId({"ns", "job2", 2}, "cand", false));
}

}  // namespace
}  // namespace accelopt::memory

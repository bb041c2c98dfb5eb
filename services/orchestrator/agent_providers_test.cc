#include "services/orchestrator/agent_providers.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace accelopt::orchestrator {
namespace {

// Answers at once with whatever the test set last.
class ScriptedReporter : public ProviderReporter {
 public:
  explicit ScriptedReporter(absl::StatusOr<std::vector<std::string>> answer) : answer_(std::move(answer)) {}
  void set_answer(absl::StatusOr<std::vector<std::string>> answer) { answer_ = std::move(answer); }
  void ReportProviders(absl::Duration deadline, Done done) override {
    ++calls;
    last_deadline = deadline;
    std::move(done)(answer_);
  }
  int calls = 0;
  absl::Duration last_deadline;

 private:
  absl::StatusOr<std::vector<std::string>> answer_;
};

v1::AgentModels Models(const std::string& planner, const std::string& executor, const std::string& summarizer) {
  v1::AgentModels m;
  m.mutable_planner()->set_provider(planner);
  m.mutable_executor()->set_provider(executor);
  m.mutable_summarizer()->set_provider(summarizer);
  return m;
}

class AgentProvidersTest : public ::testing::Test {
 protected:
  void Refresh() {
    bool called = false;
    providers_.Refresh([&called]() { called = true; });
    ASSERT_TRUE(called);
  }

  ScriptedReporter planner_{std::vector<std::string>{"openai", "builtin"}};
  ScriptedReporter executor_{std::vector<std::string>{"builtin", "openai"}};
  ScriptedReporter memory_{std::vector<std::string>{"builtin", "fake", "openai"}};
  AgentProviders providers_{{&planner_, &executor_, &memory_}, absl::Seconds(2)};
};

TEST_F(AgentProvidersTest, AcceptsReportedProvidersAndEmptyAsBuiltin) {
  Refresh();
  EXPECT_EQ(planner_.calls, 1);
  EXPECT_EQ(memory_.last_deadline, absl::Seconds(2));
  EXPECT_TRUE(providers_.Validate(Models("openai", "builtin", "fake")).ok());
  EXPECT_TRUE(providers_.Validate(Models("", "", "")).ok());
}

TEST_F(AgentProvidersTest, UnknownProviderNamesTheFieldAndTheAvailableOnes) {
  Refresh();
  absl::Status s = providers_.Validate(Models("openai", "anthropic", "builtin"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.models.executor.provider: unknown provider 'anthropic' (available: builtin, openai)");
  // "fake" is served by this memory service only.
  s = providers_.Validate(Models("fake", "builtin", "builtin"));
  EXPECT_EQ(s.message(), "spec.models.planner.provider: unknown provider 'fake' (available: builtin, openai)");
}

TEST_F(AgentProvidersTest, UnreachableServiceKeepsItsLastReport) {
  Refresh();
  planner_.set_answer(absl::UnavailableError("connection refused"));
  executor_.set_answer(std::vector<std::string>{"builtin"});
  Refresh();
  EXPECT_EQ(planner_.calls, 2);
  EXPECT_TRUE(providers_.Validate(Models("openai", "builtin", "openai")).ok());
  EXPECT_EQ(providers_.Validate(Models("openai", "openai", "openai")).message(),
            "spec.models.executor.provider: unknown provider 'openai' (available: builtin)");
}

TEST_F(AgentProvidersTest, RoleNeverReportedIsLeftToItsService) {
  memory_.set_answer(absl::DeadlineExceededError("deadline"));
  Refresh();
  EXPECT_TRUE(providers_.Validate(Models("builtin", "builtin", "anything")).ok());
  EXPECT_FALSE(providers_.Validate(Models("anything", "builtin", "builtin")).ok());
}

}  // namespace
}  // namespace accelopt::orchestrator

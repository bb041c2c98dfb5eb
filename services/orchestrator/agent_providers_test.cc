#include "services/orchestrator/agent_providers.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelopt::orchestrator {
namespace {

// Answers at once: the provider list set by the test, and a check that accepts exactly those providers
// (with `check_error`, when set, answered instead).
class ScriptedAgent : public AgentInfoClient {
 public:
  explicit ScriptedAgent(std::vector<std::string> providers) : providers_(std::move(providers)) {}
  void set_providers(absl::StatusOr<std::vector<std::string>> providers) { providers_ = std::move(providers); }
  void set_check_error(std::optional<absl::Status> error) { check_error_ = std::move(error); }

  void GetProviders(absl::Duration deadline, ProvidersDone done) override {
    last_deadline = deadline;
    std::move(done)(providers_);
  }
  void CheckModel(const v1::ModelSpec& model, absl::Duration deadline, CheckDone done) override {
    checked.push_back(model.provider());
    if (check_error_.has_value()) return std::move(done)(*check_error_);
    if (!providers_.ok()) return std::move(done)(providers_.status());
    for (const std::string& name : *providers_) {
      if (name == model.provider()) return std::move(done)(absl::OkStatus());
    }
    std::move(done)(absl::InvalidArgumentError(absl::StrCat("model.provider: unknown provider '", model.provider(),
                                                            "' (known: ", absl::StrJoin(*providers_, ", "), ")")));
  }

  std::vector<std::string> checked;
  absl::Duration last_deadline;

 private:
  absl::StatusOr<std::vector<std::string>> providers_;
  std::optional<absl::Status> check_error_;
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
  absl::Status Check(const v1::AgentModels& models) {
    std::optional<absl::Status> result;
    providers_.Check(models, [&result](absl::Status s) { result = std::move(s); });
    EXPECT_TRUE(result.has_value());
    return result.value_or(absl::InternalError("Check did not answer"));
  }

  ScriptedAgent planner_{{"builtin", "openai"}};
  ScriptedAgent executor_{{"builtin", "openai"}};
  ScriptedAgent memory_{{"builtin", "fake", "openai"}};
  AgentProviders providers_{{&planner_, &executor_, &memory_}, absl::Seconds(2)};
};

TEST_F(AgentProvidersTest, EachServiceChecksItsRoleAndEmptyMeansBuiltin) {
  EXPECT_TRUE(Check(Models("openai", "builtin", "fake")).ok());
  EXPECT_TRUE(Check(Models("", "", "")).ok());
  EXPECT_EQ(planner_.checked, (std::vector<std::string>{"openai", "builtin"}));
  EXPECT_EQ(memory_.checked, (std::vector<std::string>{"fake", "builtin"}));
  EXPECT_EQ(memory_.last_deadline, absl::Seconds(2));
}

TEST_F(AgentProvidersTest, TheServicesErrorNamesTheJobsField) {
  absl::Status s = Check(Models("openai", "anthropic", "builtin"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.models.executor.provider: unknown provider 'anthropic' (known: builtin, openai)");

  planner_.set_check_error(absl::InvalidArgumentError("model.endpoint: unknown endpoint 'x'"));
  memory_.set_check_error(absl::InvalidArgumentError("model.model: required"));
  EXPECT_EQ(Check(Models("openai", "openai", "openai")).message(),
            "spec.models.planner.endpoint: unknown endpoint 'x'");
  planner_.set_check_error(absl::InvalidArgumentError("not served here"));
  EXPECT_EQ(Check(Models("openai", "openai", "openai")).message(), "spec.models.planner: not served here");
}

TEST_F(AgentProvidersTest, UnreachableServiceIsJudgedByItsLastReport) {
  ASSERT_TRUE(Check(Models("", "", "")).ok());
  executor_.set_providers(std::vector<std::string>{"builtin"});
  ASSERT_TRUE(Check(Models("", "", "")).ok());
  executor_.set_providers(absl::UnavailableError("connection refused"));
  EXPECT_TRUE(Check(Models("openai", "builtin", "openai")).ok());
  EXPECT_EQ(Check(Models("openai", "openai", "openai")).message(),
            "spec.models.executor.provider: unknown provider 'openai' (known: builtin)");
}

TEST_F(AgentProvidersTest, ServiceNeverReachedIsLeftToCheckItsCalls) {
  memory_.set_providers(absl::DeadlineExceededError("deadline"));
  EXPECT_TRUE(Check(Models("builtin", "builtin", "anything")).ok());
  EXPECT_FALSE(Check(Models("anything", "builtin", "builtin")).ok());
}

}  // namespace
}  // namespace accelopt::orchestrator

#include "tests/llm_double/double_script.h"

#include <gtest/gtest.h>

namespace accelopt::testing {
namespace {

TEST(DoubleScriptTest, ParsesRulesDefaultAndFaults) {
  absl::StatusOr<DoubleScript> script = ParseDoubleScript(R"({
    "rules": [{"match": "plan", "times": 2, "reply": {"status": 429, "retry_after": "1"}},
              {"reply": {"fault": "truncated_json"}}],
    "default": {"content": "hi", "usage": {"prompt_tokens": 3, "completion_tokens": 4, "reasoning_tokens": 1},
                "delay_ms": 5, "max_delay_ms": 9},
    "fail_fraction": 0.3, "fail_seed": 9})");
  ASSERT_TRUE(script.ok()) << script.status();
  ASSERT_EQ(script->rules.size(), 2u);
  EXPECT_EQ(script->rules[0].match, "plan");
  EXPECT_EQ(script->rules[0].times, 2);
  EXPECT_EQ(script->rules[0].reply.status, 429);
  EXPECT_EQ(script->rules[0].reply.retry_after, "1");
  EXPECT_EQ(script->rules[1].reply.fault, DoubleReply::Fault::kTruncatedJson);
  EXPECT_EQ(script->fallback.content, "hi");
  EXPECT_EQ(script->fallback.completion_tokens, 4);
  EXPECT_EQ(script->fallback.delay, absl::Milliseconds(5));
  EXPECT_EQ(script->fallback.max_delay, absl::Milliseconds(9));
  EXPECT_EQ(script->failure.status, 500);
}

TEST(DoubleScriptTest, RejectsUnknownKeysByPath) {
  absl::StatusOr<DoubleScript> script = ParseDoubleScript(R"({"rules": [{"reply": {"colour": 1}}]})");
  ASSERT_FALSE(script.ok());
  EXPECT_NE(script.status().message().find("rules[0].reply.colour"), std::string::npos) << script.status();
  EXPECT_FALSE(ParseDoubleScript(R"({"default": {"fault": "explode"}})").ok());
}

TEST(DoubleScriptTest, FailingFractionIsDeterministicAndNearTheTarget) {
  DoubleScript script;
  script.fail_fraction = 0.3;
  script.fail_seed = 42;
  int failures = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string body = "request " + std::to_string(i);
    bool fails = FailsDeterministically(script, body, 0);
    EXPECT_EQ(fails, FailsDeterministically(script, body, 0));
    failures += fails;
  }
  EXPECT_GT(failures, 500);
  EXPECT_LT(failures, 700);
}

}  // namespace
}  // namespace accelopt::testing

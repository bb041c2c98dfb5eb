#include "libs/llm/chat_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace accelopt::llm {
namespace {

using nlohmann::json;

TEST(ChatRequestBodyTest, CarriesSettingsAndMergesExtraBody) {
  v1::ModelSpec spec;
  spec.set_model("gpt-oss-120b");
  spec.set_temperature(0.7);
  spec.set_max_tokens(1000);
  spec.set_reasoning_effort("high");
  (*spec.mutable_extra_body()->mutable_fields())["top_p"].set_number_value(0.9);
  (*spec.mutable_extra_body()->mutable_fields())["seed"].set_null_value({});
  absl::StatusOr<std::string> body = BuildChatRequestBody(spec, "sys", "usr", 7);
  ASSERT_TRUE(body.ok()) << body.status();
  json j = json::parse(*body);
  EXPECT_EQ(j["model"], "gpt-oss-120b");
  EXPECT_EQ(j["messages"][0]["role"], "system");
  EXPECT_EQ(j["messages"][1]["content"], "usr");
  EXPECT_DOUBLE_EQ(j["temperature"].get<double>(), 0.7);
  EXPECT_EQ(j["max_tokens"], 1000);
  EXPECT_EQ(j["reasoning_effort"], "high");
  EXPECT_DOUBLE_EQ(j["top_p"].get<double>(), 0.9);
  EXPECT_FALSE(j.contains("seed"));  // a null in extra_body removes the key
}

TEST(ChatRequestBodyTest, OmitsUnsetSettingsAndEmptySystem) {
  v1::ModelSpec spec;
  spec.set_model("m");
  json j = json::parse(*BuildChatRequestBody(spec, "", "u", std::nullopt));
  EXPECT_EQ(j["messages"].size(), 1u);
  EXPECT_FALSE(j.contains("temperature"));
  EXPECT_FALSE(j.contains("max_tokens"));
  EXPECT_FALSE(j.contains("reasoning_effort"));
  EXPECT_FALSE(j.contains("seed"));
}

TEST(ChatResponseTest, ReadsContentReasoningAndUsage) {
  ChatResponse r = ParseChatResponse(R"({"choices":[{"message":{"content":"plan","reasoning":"why"}}],
      "usage":{"prompt_tokens":10,"completion_tokens":20,"completion_tokens_details":{"reasoning_tokens":5}}})");
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.content, "plan");
  EXPECT_EQ(r.reasoning, "why");
  EXPECT_EQ(r.usage.prompt_tokens, 10);
  EXPECT_EQ(r.usage.completion_tokens, 20);
  EXPECT_EQ(r.usage.reasoning_tokens, 5);
  EXPECT_EQ(ParseChatResponse(R"({"choices":[{"message":{"content":"a","reasoning_content":"rc"}}]})").reasoning, "rc");
}

TEST(ChatResponseTest, SaysPreciselyWhatIsWrong) {
  ChatResponse truncated = ParseChatResponse(R"({"choices":[{"mess)");
  EXPECT_EQ(truncated.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(truncated.status.message().find("not valid JSON"), std::string::npos) << truncated.status;
  ChatResponse empty = ParseChatResponse(R"({"choices":[],"usage":{"prompt_tokens":4}})");
  EXPECT_NE(empty.status.message().find("no choices"), std::string::npos) << empty.status;
  EXPECT_EQ(empty.usage.prompt_tokens, 4);
  ChatResponse no_content =
      ParseChatResponse(R"({"choices":[{"message":{"role":"assistant"},"finish_reason":"length"}]})");
  EXPECT_NE(no_content.status.message().find("no content (finish_reason: length)"), std::string::npos)
      << no_content.status;
  // A number no double holds (found by the chat_json fuzzer; it used to escape as an exception).
  ChatResponse huge = ParseChatResponse(R"({"choices":5e99999})");
  EXPECT_EQ(huge.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(huge.status.message().find("not usable JSON"), std::string::npos) << huge.status;
}

}  // namespace
}  // namespace accelopt::llm

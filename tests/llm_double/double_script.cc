#include "tests/llm_double/double_script.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace accelopt::testing {
namespace {

using nlohmann::json;

absl::StatusOr<DoubleReply::Fault> ParseFault(const std::string& name) {
  if (name.empty() || name == "none") return DoubleReply::Fault::kNone;
  if (name == "hang") return DoubleReply::Fault::kHang;
  if (name == "truncated_json") return DoubleReply::Fault::kTruncatedJson;
  if (name == "empty_choices") return DoubleReply::Fault::kEmptyChoices;
  if (name == "no_content") return DoubleReply::Fault::kNoContent;
  if (name == "close") return DoubleReply::Fault::kCloseConnection;
  return absl::InvalidArgumentError(absl::StrCat("unknown fault '", name, "'"));
}

absl::StatusOr<DoubleReply> ParseReply(const json& j, const std::string& where) {
  DoubleReply r;
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, ": must be an object"));
  for (const auto& [key, value] : j.items()) {
    if (key == "status")
      r.status = value.get<int>();
    else if (key == "content")
      r.content = value.get<std::string>();
    else if (key == "reasoning")
      r.reasoning = value.get<std::string>();
    else if (key == "reasoning_field")
      r.reasoning_field = value.get<std::string>();
    else if (key == "retry_after")
      r.retry_after = value.get<std::string>();
    else if (key == "body")
      r.body = value.get<std::string>();
    else if (key == "delay_ms")
      r.delay = absl::Milliseconds(value.get<double>());
    else if (key == "max_delay_ms")
      r.max_delay = absl::Milliseconds(value.get<double>());
    else if (key == "fault") {
      absl::StatusOr<DoubleReply::Fault> fault = ParseFault(value.get<std::string>());
      if (!fault.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ".fault: ", fault.status().message()));
      r.fault = *fault;
    } else if (key == "usage") {
      r.prompt_tokens = value.value("prompt_tokens", 0);
      r.completion_tokens = value.value("completion_tokens", 0);
      r.reasoning_tokens = value.value("reasoning_tokens", 0);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(where, ".", key, ": unknown key"));
    }
  }
  return r;
}

uint64_t Fnv1a(absl::string_view data, uint64_t h) {
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace

absl::StatusOr<DoubleScript> ParseDoubleScript(absl::string_view text) {
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return absl::InvalidArgumentError("script: not a JSON object");
  DoubleScript script;
  try {
    for (const auto& [key, value] : root.items()) {
      if (key == "rules") {
        for (size_t i = 0; i < value.size(); ++i) {
          const json& rule = value[i];
          std::string where = absl::StrCat("rules[", i, "]");
          DoubleRule r;
          r.match = rule.value("match", "");
          r.times = rule.value("times", 0);
          if (!rule.contains("reply")) return absl::InvalidArgumentError(absl::StrCat(where, ".reply: required"));
          auto reply = ParseReply(rule["reply"], where + ".reply");
          if (!reply.ok()) return reply.status();
          r.reply = *std::move(reply);
          script.rules.push_back(std::move(r));
        }
      } else if (key == "default" || key == "failure") {
        auto reply = ParseReply(value, key);
        if (!reply.ok()) return reply.status();
        (key == "default" ? script.fallback : script.failure) = *std::move(reply);
      } else if (key == "fail_fraction") {
        script.fail_fraction = value.get<double>();
      } else if (key == "fail_seed") {
        script.fail_seed = value.get<uint64_t>();
      } else {
        return absl::InvalidArgumentError(absl::StrCat(key, ": unknown key"));
      }
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("script: ", e.what()));
  }
  if (!root.contains("failure")) script.failure.status = 500;
  return script;
}

bool FailsDeterministically(const DoubleScript& script, absl::string_view body, int occurrence) {
  if (script.fail_fraction <= 0) return false;
  uint64_t z = Fnv1a(body, 0xcbf29ce484222325ULL ^ script.fail_seed) + 0x9E3779B97F4A7C15ULL * (occurrence + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / static_cast<double>(1ULL << 53) < script.fail_fraction;
}

}  // namespace accelopt::testing

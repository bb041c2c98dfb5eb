#include "libs/llm/chat_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace accelopt::llm {
namespace {

using nlohmann::json;

int64_t IntField(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  return it->get<int64_t>();
}

std::string StringField(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

}  // namespace

absl::StatusOr<std::string> BuildChatRequestBody(const v1::ModelSpec& spec, absl::string_view system,
                                                 absl::string_view user, std::optional<uint64_t> seed) {
  json body = json::object();
  body["model"] = spec.model();
  json messages = json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", std::string(system)}});
  messages.push_back({{"role", "user"}, {"content", std::string(user)}});
  body["messages"] = std::move(messages);
  if (spec.has_temperature()) body["temperature"] = spec.temperature();
  if (spec.max_tokens() > 0) body["max_tokens"] = spec.max_tokens();
  if (!spec.reasoning_effort().empty()) body["reasoning_effort"] = spec.reasoning_effort();
  if (seed.has_value()) body["seed"] = *seed;
  if (spec.has_extra_body()) {
    std::string extra;
    auto status = google::protobuf::util::MessageToJsonString(spec.extra_body(), &extra);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model.extra_body: cannot convert to JSON: ", status.message().as_string()));
    }
    json patch = json::parse(extra, nullptr, /*allow_exceptions=*/false);
    if (patch.is_discarded()) return absl::InvalidArgumentError("model.extra_body: not a JSON object");
    body.merge_patch(patch);
  }
  // Invalid UTF-8 in a prompt (a kernel source can hold anything) is replaced rather than thrown.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

ChatResponse ParseChatResponse(absl::string_view body) {
  ChatResponse out;
  json root;
  try {
    root = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    out.status = absl::DataLossError(
        absl::StrCat("response is not valid JSON (", body.size(), " bytes, error at byte ", e.byte, ")"));
    return out;
  } catch (const json::exception& e) {  // e.g. out_of_range: a number too large for a double
    out.status = absl::DataLossError(
        absl::StrCat("response is not usable JSON (", body.size(), " bytes, json error ", e.id, ")"));
    return out;
  }
  if (!root.is_object()) {
    out.status = absl::DataLossError("response is not a JSON object");
    return out;
  }
  if (auto usage = root.find("usage"); usage != root.end() && usage->is_object()) {
    out.usage.prompt_tokens = IntField(*usage, "prompt_tokens");
    out.usage.completion_tokens = IntField(*usage, "completion_tokens");
    if (auto details = usage->find("completion_tokens_details"); details != usage->end()) {
      out.usage.reasoning_tokens = IntField(*details, "reasoning_tokens");
    }
  }
  auto choices = root.find("choices");
  if (choices == root.end() || !choices->is_array() || choices->empty()) {
    out.status = absl::DataLossError("response has no choices");
    return out;
  }
  const json& choice = (*choices)[0];
  auto message = choice.is_object() ? choice.find("message") : choice.end();
  if (!choice.is_object() || message == choice.end() || !message->is_object()) {
    out.status = absl::DataLossError("response choices[0] has no message object");
    return out;
  }
  out.reasoning = StringField(*message, "reasoning_content");
  if (out.reasoning.empty()) out.reasoning = StringField(*message, "reasoning");
  auto content = message->find("content");
  if (content == message->end() || !content->is_string()) {
    std::string finish = StringField(choice, "finish_reason");
    out.status = absl::DataLossError(absl::StrCat(
        "response choices[0].message has no content (finish_reason: ", finish.empty() ? "none" : finish, ")"));
    return out;
  }
  out.content = content->get<std::string>();
  return out;
}

}  // namespace accelopt::llm

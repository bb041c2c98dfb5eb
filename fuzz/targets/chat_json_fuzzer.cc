// Chat Completions response bodies through llm::ParseChatResponse.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "libs/llm/chat_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  accelopt::llm::ChatResponse response = accelopt::llm::ParseChatResponse(body);
  if (!response.status.ok() && response.status.code() != absl::StatusCode::kDataLoss) __builtin_trap();
  if (!response.status.ok() && !response.content.empty()) __builtin_trap();
  return 0;
}

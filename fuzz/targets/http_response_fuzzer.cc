// Raw bytes from an LLM endpoint through llm::ParseHttpResponse (the transport's parser configuration).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "libs/llm/http_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto response = accelopt::llm::ParseHttpResponse(bytes);
  if (!response.ok()) {
    if (response.status().code() != absl::StatusCode::kDataLoss) __builtin_trap();
    return 0;
  }
  if (response->status < 0 || response->status > 999) __builtin_trap();
  if (response->body.size() > bytes.size()) __builtin_trap();
  return 0;
}

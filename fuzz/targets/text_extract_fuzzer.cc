// Model answers through llm::FirstFencedBlock and llm::PlanTitle.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "libs/llm/text_extract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto block = accelopt::llm::FirstFencedBlock(text);
  if (block.ok() && block->size() > text.size()) __builtin_trap();
  if (!block.ok() && block.status().code() != absl::StatusCode::kNotFound) __builtin_trap();
  const std::string title = accelopt::llm::PlanTitle(text);
  if (title.size() > 200) __builtin_trap();
  return 0;
}

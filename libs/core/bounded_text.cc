#include "libs/core/bounded_text.h"

#include "absl/strings/str_cat.h"

namespace accelopt::core {

std::string BoundedText(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return absl::StrCat(text.substr(0, cut), "... (", text.size() - cut, " bytes more)");
}

}  // namespace accelopt::core

#include "libs/llm/text_extract.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace accelopt::llm {
namespace {

constexpr size_t kMaxTitle = 200;

std::string Clip(absl::string_view s) { return std::string(s.substr(0, kMaxTitle)); }

constexpr absl::string_view kKernelDef = "def kernel(";

// The first string in `value` (depth first, in document order) that defines the kernel; string values that
// are themselves JSON (tool-call "arguments") are searched too.
std::optional<std::string> KernelInJson(const nlohmann::json& value, int depth = 0) {
  if (depth > 8) return std::nullopt;
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
    if (absl::StartsWith(trimmed, "{") || absl::StartsWith(trimmed, "[")) {
      nlohmann::json inner = nlohmann::json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
      if (!inner.is_discarded()) return KernelInJson(inner, depth + 1);
    }
    if (!absl::StrContains(text, kKernelDef)) return std::nullopt;
    absl::StatusOr<std::string> fenced = FirstFencedBlock(text);
    return fenced.ok() ? *fenced : std::string(trimmed);
  }
  if (value.is_structured()) {
    for (const auto& item : value) {
      if (std::optional<std::string> found = KernelInJson(item, depth + 1)) return found;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string PlanTitle(absl::string_view text) {
  size_t search = 0;
  while (true) {
    size_t open = text.find("**", search);
    if (open == absl::string_view::npos) break;
    size_t close = text.find("**", open + 2);
    if (close == absl::string_view::npos) break;
    absl::string_view inside = absl::StripAsciiWhitespace(text.substr(open + 2, close - open - 2));
    if (!inside.empty() && inside.find('\n') == absl::string_view::npos) return Clip(inside);
    search = close + 2;
  }
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    while (!line.empty() && (line[0] == '#' || line[0] == '*' || line[0] == '-' || line[0] == ' ')) {
      line.remove_prefix(1);
    }
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) return Clip(line);
  }
  return "";
}

absl::StatusOr<std::string> FirstFencedBlock(absl::string_view text) {
  size_t open = text.find("```");
  if (open == absl::string_view::npos) return absl::NotFoundError("no fenced code block in the response");
  size_t line_end = text.find('\n', open);
  if (line_end == absl::string_view::npos) {
    return absl::NotFoundError("the response's code block is never closed (truncated answer?)");
  }
  size_t close = text.find("```", line_end + 1);
  if (close == absl::string_view::npos) {
    return absl::NotFoundError("the response's code block is never closed (truncated answer?)");
  }
  absl::string_view code = text.substr(line_end + 1, close - line_end - 1);
  // Drop blank lines around the code, keep the first line's indentation.
  while (!code.empty()) {
    size_t nl = code.find('\n');
    if (nl == absl::string_view::npos || !absl::StripAsciiWhitespace(code.substr(0, nl)).empty()) break;
    code.remove_prefix(nl + 1);
  }
  code = absl::StripTrailingAsciiWhitespace(code);
  return std::string(code);
}

absl::StatusOr<std::string> KernelSource(absl::string_view text) {
  // Every closed fenced block, in order.
  std::vector<std::string> blocks;
  for (absl::string_view rest = text;;) {
    absl::StatusOr<std::string> block = FirstFencedBlock(rest);
    if (!block.ok()) {
      if (blocks.empty() && rest.find("```") != absl::string_view::npos) return block.status();
      break;
    }
    blocks.push_back(*std::move(block));
    const size_t open = rest.find("```");
    const size_t close = rest.find("```", rest.find('\n', open) + 1);
    rest = rest.substr(close + 3);
  }
  for (const std::string& block : blocks) {
    if (absl::StrContains(block, kKernelDef)) return block;
  }
  if (!blocks.empty()) return blocks.front();
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (absl::StartsWith(trimmed, "{")) {
    nlohmann::json root = nlohmann::json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
    if (!root.is_discarded()) {
      if (std::optional<std::string> code = KernelInJson(root)) return *std::move(code);
    }
  }
  if (absl::StrContains(trimmed, kKernelDef) &&
      (absl::StartsWith(trimmed, "import ") || absl::StartsWith(trimmed, "from ") ||
       absl::StartsWith(trimmed, "def ") || absl::StartsWith(trimmed, "@"))) {
    return std::string(trimmed);
  }
  return absl::NotFoundError("no fenced code block in the response");
}

}  // namespace accelopt::llm

#include "libs/llm/text_extract.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace accelopt::llm {
namespace {

constexpr size_t kMaxTitle = 200;

std::string Clip(absl::string_view s) { return std::string(s.substr(0, kMaxTitle)); }

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

}  // namespace accelopt::llm

#include "libs/report/line_diff.h"

#include "absl/strings/str_split.h"

namespace accelopt::report {

std::vector<DiffLine> DiffLines(const std::string& old_text, const std::string& new_text, size_t max_lines) {
  const std::vector<std::string> a = absl::StrSplit(old_text, '\n');
  const std::vector<std::string> b = absl::StrSplit(new_text, '\n');
  std::vector<DiffLine> out;
  if (a.size() > max_lines || b.size() > max_lines) {
    for (const std::string& line : a) out.push_back({'-', line});
    for (const std::string& line : b) out.push_back({'+', line});
    return out;
  }
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out.push_back({' ', a[i]});
      ++i, ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push_back({'-', a[i++]});
    } else {
      out.push_back({'+', b[j++]});
    }
  }
  return out;
}

}  // namespace accelopt::report

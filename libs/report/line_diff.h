// A line diff of two texts, for showing the best kernel against the baseline.
#pragma once

#include <string>
#include <vector>

namespace accelopt::report {

struct DiffLine {
  char op = ' ';  // ' ' unchanged, '-' only in the old text, '+' only in the new text
  std::string text;
};

// Longest-common-subsequence diff by lines. Texts longer than `max_lines` lines each are compared as a whole
// (all old lines removed, all new lines added) to bound the quadratic cost.
std::vector<DiffLine> DiffLines(const std::string& old_text, const std::string& new_text, size_t max_lines = 3000);

}  // namespace accelopt::report

#include "cli/suggest.h"

#include <algorithm>

namespace accelopt::cli {

int EditDistance(absl::string_view a, absl::string_view b) {
  // Optimal string alignment distance over three rows.
  std::vector<int> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<std::string> ClosestMatch(absl::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  int best_distance = 3;
  for (const std::string& candidate : candidates) {
    const int d = EditDistance(word, candidate);
    if (d < best_distance && 2 * d < static_cast<int>(word.size())) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace accelopt::cli

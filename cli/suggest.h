// "Did you mean": the closest known word to a mistyped one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace accelopt::cli {

// Edit distance (insertions, deletions, substitutions and swaps of neighbours each count 1).
int EditDistance(absl::string_view a, absl::string_view b);

// The candidate nearest to `word` when it is close enough to be a typo (distance at most 2, and less than
// half of the word's length), the first such candidate on ties; nullopt otherwise.
std::optional<std::string> ClosestMatch(absl::string_view word, const std::vector<std::string>& candidates);

}  // namespace accelopt::cli

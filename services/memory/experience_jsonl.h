// Export and import format of the memory: JSON Lines, one v1.Experience per line as proto JSON with proto
// field names (docs/memory.md "Export format").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::memory {

// Largest JSON Lines text ImportExperiences accepts (below the servers' default 16 MiB request limit).
inline constexpr size_t kMaxImportBytes = 8u << 20;
// Largest ListExperiences / ExportExperiences answer.
inline constexpr size_t kMaxExportBytes = 64u << 20;

// One line, without the newline.
std::string ExperienceToJson(const v1::Experience& experience);

// Parses and validates every line before returning anything. Blank lines are ignored. INVALID_ARGUMENT
// naming the line number (from 1) for a line that is not an Experience, lacks an id, a valid namespace or
// a summary, has a speedup below 1 or a negative sequence, or repeats an earlier line's id; and naming the
// limit when `jsonl` is larger than kMaxImportBytes.
absl::StatusOr<std::vector<v1::Experience>> ParseExperienceJsonLines(absl::string_view jsonl);

}  // namespace accelopt::memory

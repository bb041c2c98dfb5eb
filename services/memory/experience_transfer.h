// ListExperiences, ExportExperiences and ImportExperiences over an ExperienceStore, with their size guards.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/common.pb.h"
#include "services/memory/experience_store.h"
#include "services/memory/memory_metrics.h"

namespace accelopt::memory {

// Every experience of `ns` (of every namespace when empty: by namespace name, each in insertion order).
// INVALID_ARGUMENT for a bad namespace; RESOURCE_EXHAUSTED naming the limit when the answer would exceed
// kMaxExportBytes.
absl::StatusOr<std::vector<v1::Experience>> ListExperiences(const ExperienceStore& store, absl::string_view ns);

struct ExportResult {
  std::string jsonl;
  int count = 0;
};
// The same experiences as ListExperiences, as JSON Lines (experience_jsonl.h); same errors.
absl::StatusOr<ExportResult> ExportExperiences(const ExperienceStore& store, absl::string_view ns);

struct ImportCounts {
  int imported = 0;
  int skipped = 0;
};
// Validates every line, then stores all new experiences in one atomic write (ids already stored are
// skipped and counted). INVALID_ARGUMENT naming the line (nothing stored) or the size limit.
absl::StatusOr<ImportCounts> ImportExperiences(ExperienceStore* store, MemoryMetrics* metrics, absl::string_view jsonl);

}  // namespace accelopt::memory

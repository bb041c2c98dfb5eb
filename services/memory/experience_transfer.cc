#include "services/memory/experience_transfer.h"

#include "absl/strings/str_cat.h"
#include "libs/core/status_macros.h"
#include "services/memory/experience_jsonl.h"

namespace accelopt::memory {
namespace {

absl::Status TooLarge(absl::string_view ns) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the experiences of ", ns.empty() ? "every namespace" : absl::StrCat("namespace ", ns),
      " are over the answer limit of ", kMaxExportBytes, " bytes (64 MiB)", ns.empty() ? "; name one namespace" : ""));
}

}  // namespace

absl::StatusOr<std::vector<v1::Experience>> ListExperiences(const ExperienceStore& store, absl::string_view ns) {
  if (!ns.empty()) ACCELOPT_RETURN_IF_ERROR(ValidateNamespace(ns, "namespace"));
  std::vector<v1::Experience> out;
  size_t bytes = 0;
  bool too_large = false;
  ACCELOPT_RETURN_IF_ERROR(store.ForEach(ns, [&](const v1::Experience& e) {
    bytes += e.ByteSizeLong();
    too_large = bytes > kMaxExportBytes;
    if (!too_large) out.push_back(e);
    return !too_large;
  }));
  if (too_large) return TooLarge(ns);
  return out;
}

absl::StatusOr<ExportResult> ExportExperiences(const ExperienceStore& store, absl::string_view ns) {
  if (!ns.empty()) ACCELOPT_RETURN_IF_ERROR(ValidateNamespace(ns, "namespace"));
  ExportResult result;
  bool too_large = false;
  ACCELOPT_RETURN_IF_ERROR(store.ForEach(ns, [&](const v1::Experience& e) {
    absl::StrAppend(&result.jsonl, ExperienceToJson(e), "\n");
    ++result.count;
    too_large = result.jsonl.size() > kMaxExportBytes;
    return !too_large;
  }));
  if (too_large) return TooLarge(ns);
  return result;
}

absl::StatusOr<ImportCounts> ImportExperiences(ExperienceStore* store, MemoryMetrics* metrics,
                                               absl::string_view jsonl) {
  ACCELOPT_ASSIGN_OR_RETURN(std::vector<v1::Experience> experiences, ParseExperienceJsonLines(jsonl));
  ACCELOPT_ASSIGN_OR_RETURN(ExperienceStore::ImportResult result, store->Import(std::move(experiences)));
  for (const v1::Experience& e : result.written) {
    metrics->RecordStored(e.namespace_(), e.provenance().job_id(), 1);
  }
  metrics->experiences.Set(static_cast<double>(store->Count()));
  return ImportCounts{static_cast<int>(result.written.size()), result.skipped};
}

}  // namespace accelopt::memory

#include "services/memory/experience_store.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/core/status_macros.h"

namespace accelopt::memory {
namespace {

constexpr size_t kMaxNamespaceBytes = 256;
constexpr int kSequenceDigits = 20;

// experiences: "<namespace>/<20-digit sequence>" -> serialized v1.Experience.
std::string ExperienceKey(absl::string_view ns, int64_t sequence) { return absl::StrFormat("%s/%020d", ns, sequence); }

bool ParseExperienceKey(absl::string_view key, std::string* ns, int64_t* sequence) {
  size_t slash = key.rfind('/');
  if (slash == absl::string_view::npos || slash == 0 || key.size() - slash - 1 != kSequenceDigits) return false;
  *ns = std::string(key.substr(0, slash));
  return absl::SimpleAtoi(key.substr(slash + 1), sequence);
}

// index: "nsid/<namespace>/<experience id>" -> experience key. An id is unique within its namespace only: one
// tenant's ids neither reveal nor block another's. (Stores written before 2026-11-27 keyed "id/<id>" across all
// namespaces; Open moves such keys.)
std::string IdKey(absl::string_view ns, absl::string_view id) { return absl::StrCat("nsid/", ns, "/", id); }
constexpr char kGlobalIdPrefix[] = "id/";

// index: "iteration/<namespace>/<job>/<10-digit iteration>" -> the ids it stored, one per line.
std::string IterationMarkerKey(const IterationKey& key) {
  return absl::StrFormat("iteration/%s/%s/%010d", key.ns, key.job_id, key.iteration);
}

absl::StatusOr<v1::Experience> ParseRecord(absl::string_view key, absl::string_view value) {
  v1::Experience experience;
  if (!experience.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError(absl::StrCat("experience record '", key, "' does not parse"));
  }
  return experience;
}

}  // namespace

absl::Status ValidateNamespace(absl::string_view ns, absl::string_view field) {
  if (ns.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": must not be empty"));
  if (ns.size() > kMaxNamespaceBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": longer than ", kMaxNamespaceBytes, " bytes"));
  }
  for (char c : ns) {
    if (c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": '", ns, "' contains '/' or a control character"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> ExperienceStore::Families() { return {kExperiencesFamily, kIndexFamily}; }

absl::StatusOr<std::unique_ptr<ExperienceStore>> ExperienceStore::Open(storage::KvStore* kv) {
  std::unique_ptr<ExperienceStore> store(new ExperienceStore(kv));
  absl::Status malformed;
  // Built outside the store (the scan callback cannot show the analysis that index_mu_ is held), then moved in.
  std::map<std::string, std::vector<int64_t>, std::less<>> sequences;
  int64_t count = 0;
  ACCELOPT_RETURN_IF_ERROR(kv->Scan(kExperiencesFamily, "", [&](absl::string_view key, absl::string_view) {
    std::string ns;
    int64_t sequence = 0;
    if (!ParseExperienceKey(key, &ns, &sequence)) {
      malformed = absl::DataLossError(absl::StrCat("malformed experience key '", key, "'"));
      return false;
    }
    sequences[ns].push_back(sequence);
    ++count;
    return true;
  }));
  ACCELOPT_RETURN_IF_ERROR(malformed);
  // Index keys of the earlier global id index, moved under their experience's namespace in one write.
  storage::WriteBatch moved;
  ACCELOPT_RETURN_IF_ERROR(kv->Scan(kIndexFamily, kGlobalIdPrefix, [&](absl::string_view key, absl::string_view value) {
    std::string ns;
    int64_t sequence = 0;
    if (!ParseExperienceKey(value, &ns, &sequence)) {
      malformed = absl::DataLossError(absl::StrCat("index key '", key, "' names a malformed experience key"));
      return false;
    }
    moved.Put(kIndexFamily, IdKey(ns, key.substr(sizeof(kGlobalIdPrefix) - 1)), value);
    moved.Delete(kIndexFamily, key);
    return true;
  }));
  ACCELOPT_RETURN_IF_ERROR(malformed);
  if (!moved.empty()) ACCELOPT_RETURN_IF_ERROR(kv->Write(std::move(moved)));
  {
    absl::MutexLock lock(&store->index_mu_);
    store->sequences_ = std::move(sequences);
    store->count_ = count;
  }
  return store;
}

absl::StatusOr<std::optional<std::vector<v1::Experience>>> ExperienceStore::CompletedIteration(
    const IterationKey& key) const {
  auto marker = kv_->Get(kIndexFamily, IterationMarkerKey(key));
  if (absl::IsNotFound(marker.status())) return std::nullopt;
  if (!marker.ok()) return marker.status();
  std::vector<v1::Experience> experiences;
  for (absl::string_view id : absl::StrSplit(*marker, '\n', absl::SkipEmpty())) {
    ACCELOPT_ASSIGN_OR_RETURN(std::optional<v1::Experience> experience, FindById(key.ns, id));
    if (!experience) {
      return absl::DataLossError(absl::StrCat("iteration marker ", IterationMarkerKey(key), " names experience ", id,
                                              ", which is not stored"));
    }
    experiences.push_back(std::move(*experience));
  }
  return experiences;
}

absl::StatusOr<std::optional<v1::Experience>> ExperienceStore::FindById(absl::string_view ns,
                                                                        absl::string_view id) const {
  auto key = kv_->Get(kIndexFamily, IdKey(ns, id));
  if (absl::IsNotFound(key.status())) return std::nullopt;
  if (!key.ok()) return key.status();
  ACCELOPT_ASSIGN_OR_RETURN(std::string value, kv_->Get(kExperiencesFamily, *key));
  return ParseRecord(*key, value);
}

absl::Status ExperienceStore::AddToBatch(const v1::Experience& experience, storage::WriteBatch* batch) {
  std::string key = ExperienceKey(experience.namespace_(), experience.sequence());
  std::string value;
  if (!experience.SerializeToString(&value)) {
    return absl::InternalError(absl::StrCat("cannot serialize experience ", experience.id()));
  }
  batch->Put(kExperiencesFamily, key, value);
  batch->Put(kIndexFamily, IdKey(experience.namespace_(), experience.id()), key);
  return absl::OkStatus();
}

int64_t ExperienceStore::NextSequence(absl::string_view ns) const {
  auto it = sequences_.find(ns);
  return it == sequences_.end() || it->second.empty() ? 1 : it->second.back() + 1;
}

void ExperienceStore::IndexWritten(const std::vector<v1::Experience>& written) {
  absl::MutexLock lock(&index_mu_);
  for (const v1::Experience& e : written) {
    std::vector<int64_t>& seqs = sequences_[e.namespace_()];
    if (seqs.empty() || seqs.back() < e.sequence()) {
      seqs.push_back(e.sequence());
    } else {
      seqs.insert(std::lower_bound(seqs.begin(), seqs.end(), e.sequence()), e.sequence());
    }
  }
  count_ += static_cast<int64_t>(written.size());
}

absl::StatusOr<ExperienceStore::AppendResult> ExperienceStore::AppendIteration(const IterationKey& key,
                                                                               std::vector<v1::Experience> experiences,
                                                                               bool complete) {
  absl::MutexLock write_lock(&write_mu_);
  ACCELOPT_ASSIGN_OR_RETURN(auto completed, CompletedIteration(key));
  if (completed) return AppendResult{std::move(*completed), 0};

  int64_t next_sequence = 0;
  {
    absl::ReaderMutexLock lock(&index_mu_);
    next_sequence = NextSequence(key.ns);
  }
  AppendResult result;
  std::vector<v1::Experience> written;
  storage::WriteBatch batch;
  for (v1::Experience& e : experiences) {
    if (e.id().empty()) return absl::InvalidArgumentError("experience without an id");
    ACCELOPT_ASSIGN_OR_RETURN(std::optional<v1::Experience> stored, FindById(key.ns, e.id()));
    auto earlier =
        std::find_if(written.begin(), written.end(), [&](const v1::Experience& w) { return w.id() == e.id(); });
    if (stored) {
      result.experiences.push_back(std::move(*stored));
    } else if (earlier != written.end()) {
      result.experiences.push_back(*earlier);
    } else {
      e.set_namespace_(key.ns);
      e.set_sequence(next_sequence++);
      ACCELOPT_RETURN_IF_ERROR(AddToBatch(e, &batch));
      written.push_back(e);
      result.experiences.push_back(std::move(e));
    }
  }
  if (complete) {
    std::vector<std::string> ids;
    for (const v1::Experience& e : result.experiences) ids.push_back(e.id());
    batch.Put(kIndexFamily, IterationMarkerKey(key), absl::StrJoin(ids, "\n"));
  }
  if (!batch.empty()) ACCELOPT_RETURN_IF_ERROR(kv_->Write(std::move(batch)));
  IndexWritten(written);
  result.written = static_cast<int>(written.size());
  return result;
}

absl::StatusOr<ExperienceStore::ImportResult> ExperienceStore::Import(std::vector<v1::Experience> experiences) {
  absl::MutexLock write_lock(&write_mu_);
  // Sequences taken per namespace: stored ones plus those assigned earlier in this import.
  std::map<std::string, std::set<int64_t>, std::less<>> taken;
  {
    absl::ReaderMutexLock lock(&index_mu_);
    for (const v1::Experience& e : experiences) {
      if (taken.count(e.namespace_())) continue;
      auto it = sequences_.find(e.namespace_());
      auto& seqs = taken[e.namespace_()];
      if (it != sequences_.end()) seqs.insert(it->second.begin(), it->second.end());
    }
  }
  ImportResult result;
  std::vector<v1::Experience> written;
  absl::flat_hash_set<std::string> ids;  // "<namespace>/<id>" of this call
  storage::WriteBatch batch;
  for (v1::Experience& e : experiences) {
    ACCELOPT_ASSIGN_OR_RETURN(std::optional<v1::Experience> stored, FindById(e.namespace_(), e.id()));
    if (stored || !ids.insert(absl::StrCat(e.namespace_(), "/", e.id())).second) {
      ++result.skipped;
      continue;
    }
    std::set<int64_t>& seqs = taken[e.namespace_()];
    if (e.sequence() <= 0 || seqs.count(e.sequence())) {
      e.set_sequence(seqs.empty() ? 1 : *seqs.rbegin() + 1);
    }
    seqs.insert(e.sequence());
    ACCELOPT_RETURN_IF_ERROR(AddToBatch(e, &batch));
    written.push_back(std::move(e));
  }
  if (!batch.empty()) ACCELOPT_RETURN_IF_ERROR(kv_->Write(std::move(batch)));
  IndexWritten(written);
  result.written = std::move(written);
  return result;
}

absl::Status ExperienceStore::ForEach(absl::string_view ns, const Visitor& fn) const {
  std::vector<std::string> namespaces = ns.empty() ? Namespaces() : std::vector<std::string>{std::string(ns)};
  absl::Status parse_error;
  bool stopped = false;
  for (const std::string& n : namespaces) {
    ACCELOPT_RETURN_IF_ERROR(
        kv_->Scan(kExperiencesFamily, absl::StrCat(n, "/"), [&](absl::string_view key, absl::string_view value) {
          auto experience = ParseRecord(key, value);
          if (!experience.ok()) {
            parse_error = experience.status();
            return false;
          }
          stopped = !fn(*experience);
          return !stopped;
        }));
    ACCELOPT_RETURN_IF_ERROR(parse_error);
    if (stopped) break;
  }
  return absl::OkStatus();
}

absl::Status ExperienceStore::ForEachNewestFirst(absl::string_view ns, const Visitor& fn) const {
  absl::Status parse_error;
  ACCELOPT_RETURN_IF_ERROR(
      kv_->ScanReverse(kExperiencesFamily, absl::StrCat(ns, "/"), [&](absl::string_view key, absl::string_view value) {
        auto experience = ParseRecord(key, value);
        if (!experience.ok()) {
          parse_error = experience.status();
          return false;
        }
        return fn(*experience);
      }));
  return parse_error;
}

absl::StatusOr<v1::Experience> ExperienceStore::Get(absl::string_view ns, int64_t sequence) const {
  std::string key = ExperienceKey(ns, sequence);
  ACCELOPT_ASSIGN_OR_RETURN(std::string value, kv_->Get(kExperiencesFamily, key));
  return ParseRecord(key, value);
}

std::vector<int64_t> ExperienceStore::Sequences(absl::string_view ns) const {
  absl::ReaderMutexLock lock(&index_mu_);
  auto it = sequences_.find(ns);
  return it == sequences_.end() ? std::vector<int64_t>{} : it->second;
}

int64_t ExperienceStore::CountIn(absl::string_view ns) const {
  absl::ReaderMutexLock lock(&index_mu_);
  auto it = sequences_.find(ns);
  return it == sequences_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<int64_t> ExperienceStore::SequencesAt(absl::string_view ns, const std::vector<int64_t>& positions) const {
  absl::ReaderMutexLock lock(&index_mu_);
  std::vector<int64_t> out;
  auto it = sequences_.find(ns);
  if (it == sequences_.end()) return out;
  for (int64_t p : positions) {
    if (p >= 0 && p < static_cast<int64_t>(it->second.size())) out.push_back(it->second[p]);
  }
  return out;
}

std::vector<std::string> ExperienceStore::Namespaces() const {
  absl::ReaderMutexLock lock(&index_mu_);
  std::vector<std::string> names;
  for (const auto& [name, seqs] : sequences_) {
    if (!seqs.empty()) names.push_back(name);
  }
  return names;
}

int64_t ExperienceStore::Count() const {
  absl::ReaderMutexLock lock(&index_mu_);
  return count_;
}

}  // namespace accelopt::memory

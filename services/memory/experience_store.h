// Durable optimization memory over a KvStore: experiences per namespace in insertion order, looked up by id,
// and markers of completed iterations (docs/memory.md "Storage layout").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "accelopt/v1/common.pb.h"
#include "libs/storage/kv_store.h"

namespace accelopt::memory {

// INVALID_ARGUMENT naming `field` unless `ns` is 1-256 bytes without '/' or control characters.
absl::Status ValidateNamespace(absl::string_view ns, absl::string_view field);

// One SummarizeIteration of one job in one namespace.
struct IterationKey {
  std::string ns;
  std::string job_id;
  int32_t iteration = 0;
};

// Thread-safe. Writes are serialized inside the process (the KvStore's RocksDB lock keeps other processes
// out); every write is one atomic, synced batch, so a crash leaves each write whole or absent.
class ExperienceStore {
 public:
  static constexpr char kExperiencesFamily[] = "experiences";
  static constexpr char kIndexFamily[] = "index";
  // The column families Open needs the KvStore to have.
  static std::vector<std::string> Families();

  // Loads the per-namespace sequence index from `kv` (not owned; must outlive the store). DATA_LOSS when
  // a stored key is malformed.
  static absl::StatusOr<std::unique_ptr<ExperienceStore>> Open(storage::KvStore* kv);

  // The experiences stored by `key` when that iteration was completed (in insertion order); nullopt when it
  // never was.
  absl::StatusOr<std::optional<std::vector<v1::Experience>>> CompletedIteration(const IterationKey& key) const;

  // nullopt when no experience of namespace `ns` has `id` (ids are unique within a namespace only).
  absl::StatusOr<std::optional<v1::Experience>> FindById(absl::string_view ns, absl::string_view id) const;

  struct AppendResult {
    // Every experience of the call, in order, as stored (the stored copy when the id already existed).
    std::vector<v1::Experience> experiences;
    // How many were written by this call.
    int written = 0;
  };
  // Appends the experiences whose id is not stored yet to namespace `key.ns`, in order, assigning the next
  // sequences; when `complete`, also marks the iteration completed. All in ONE atomic write. When the
  // iteration is already marked complete, writes nothing and returns its stored experiences. Each
  // experience must have an id; its namespace and sequence are overwritten.
  absl::StatusOr<AppendResult> AppendIteration(const IterationKey& key, std::vector<v1::Experience> experiences,
                                               bool complete);

  struct ImportResult {
    // The experiences written, as stored.
    std::vector<v1::Experience> written;
    // Experiences not written because their id was stored already (or repeated in the call).
    int skipped = 0;
  };
  // Stores every experience whose id is not stored yet, in ONE atomic write (all or nothing). Ids, namespaces
  // and provenance are kept; a sequence is kept when it is > 0 and free in its namespace, else the
  // experience gets the next sequence after the namespace's newest.
  absl::StatusOr<ImportResult> Import(std::vector<v1::Experience> experiences);

  using Visitor = std::function<bool(const v1::Experience&)>;
  // Calls `fn` for each experience of `ns` (every namespace, in name order, when empty) in insertion order,
  // until it returns false. DATA_LOSS names a record that does not parse.
  absl::Status ForEach(absl::string_view ns, const Visitor& fn) const;
  // Like ForEach for one namespace, newest first.
  absl::Status ForEachNewestFirst(absl::string_view ns, const Visitor& fn) const;
  // NOT_FOUND when `ns` has no experience with `sequence`.
  absl::StatusOr<v1::Experience> Get(absl::string_view ns, int64_t sequence) const;

  // The sequences stored in `ns`, ascending.
  std::vector<int64_t> Sequences(absl::string_view ns) const;
  // How many experiences `ns` holds.
  int64_t CountIn(absl::string_view ns) const;
  // The sequences at `positions` (0-based, in ascending sequence order) of `ns`; positions out of range are
  // left out.
  std::vector<int64_t> SequencesAt(absl::string_view ns, const std::vector<int64_t>& positions) const;
  std::vector<std::string> Namespaces() const;
  // Experiences stored in every namespace.
  int64_t Count() const;

 private:
  explicit ExperienceStore(storage::KvStore* kv) : kv_(kv) {}

  // Adds `experience` (namespace and sequence set) to `batch` with its id index entry.
  static absl::Status AddToBatch(const v1::Experience& experience, storage::WriteBatch* batch);
  int64_t NextSequence(absl::string_view ns) const ABSL_SHARED_LOCKS_REQUIRED(index_mu_);
  void IndexWritten(const std::vector<v1::Experience>& written);

  storage::KvStore* kv_;
  // Held across every read-check-write sequence, so writers see each other's results.
  absl::Mutex write_mu_;
  mutable absl::Mutex index_mu_;
  std::map<std::string, std::vector<int64_t>, std::less<>> sequences_ ABSL_GUARDED_BY(index_mu_);
  int64_t count_ ABSL_GUARDED_BY(index_mu_) = 0;
};

}  // namespace accelopt::memory

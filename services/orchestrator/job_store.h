// Durable state of the orchestrator in a KvStore: job records, candidates, events, plan records and the
// idempotency index. A Transaction collects every write of one state transition; Commit applies it as one
// atomic RocksDB WriteBatch.
//
// Layout (column family: key -> value):
//   jobs:       <job_id>                             -> JobRecord
//   candidates: <job_id>/<candidate_id>              -> Candidate
//   events:     <job_id>/<sequence, 20 digits>       -> JobEvent
//   index:      idem/<idempotency key>               -> job id
//   index:      plan/<job_id>/<iteration>/<parent>   -> PlanResponse (the planner's answer, kept so a resumed
//                                                       job never asks for the same plans twice)
//   index:      outbox/<job_id>/<iteration, 6 digits> -> SummarizeIterationRequest (an iteration's summary
//                                                       not yet acknowledged by the memory service)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "accelopt/v1/job.pb.h"
#include "accelopt/v1/memory_service.pb.h"
#include "accelopt/v1/planner_service.pb.h"
#include "libs/storage/kv_store.h"

namespace accelopt::orchestrator {

// Column families the store needs (the orchestrator's main opens exactly these).
inline const std::vector<std::string>& JobStoreFamilies() {
  static const std::vector<std::string> families = {"jobs", "candidates", "events", "index"};
  return families;
}

// Writes of one transition. Events take their sequence numbers from the record's next_sequence.
class Transaction {
 public:
  void PutJob(const v1::JobRecord& record);
  void PutCandidate(const v1::Candidate& candidate);
  void PutPlans(absl::string_view job_id, int iteration, absl::string_view parent_id, const v1::PlanResponse& plans);
  void PutIdempotencyKey(absl::string_view key, absl::string_view job_id);
  // The durable summarization of (request.job_id, request.iteration), until DeleteOutbox.
  void PutOutbox(const v1::SummarizeIterationRequest& request);
  void DeleteOutbox(absl::string_view job_id, int iteration);
  // Assigns `event` the record's next sequence number (and advances it), stamps job id and time, and
  // stores it. The record itself must still be written with PutJob (after the last AddEvent).
  void AddEvent(v1::JobRecord* record, v1::JobEvent event);

  // Events added so far, in order (to publish to watchers after the commit).
  const std::vector<v1::JobEvent>& events() const { return events_; }
  // The candidates put so far, the last version of each by id (what the store holds after the commit).
  // Moves them out; the writes themselves stay in the transaction.
  std::map<std::string, v1::Candidate> TakeCandidates() { return std::move(candidates_); }
  bool empty() const { return batch_.empty(); }

 private:
  friend class JobStore;
  storage::WriteBatch batch_;
  std::vector<v1::JobEvent> events_;
  std::map<std::string, v1::Candidate> candidates_;
};

// Thread-safe (the KvStore is).
class JobStore {
 public:
  // `kv` must have JobStoreFamilies() and outlive this.
  explicit JobStore(storage::KvStore* kv) : kv_(kv) {}

  // Applies every write of `txn` atomically and durably.
  absl::Status Commit(Transaction txn);

  // Every job record, in key order. DATA_LOSS names a record that does not parse.
  absl::StatusOr<std::vector<v1::JobRecord>> LoadJobs() const;
  // NOT_FOUND naming the job.
  absl::StatusOr<v1::JobRecord> LoadJob(absl::string_view job_id) const;
  // The job's candidates, in key order.
  absl::StatusOr<std::vector<v1::Candidate>> LoadCandidates(absl::string_view job_id) const;
  // The stored planner answer for (job, iteration, parent), or nullopt.
  absl::StatusOr<std::optional<v1::PlanResponse>> LoadPlans(absl::string_view job_id, int iteration,
                                                            absl::string_view parent_id) const;
  // Every outbox entry (summarizations not yet acknowledged), in key order.
  absl::StatusOr<std::vector<v1::SummarizeIterationRequest>> LoadOutbox() const;
  // The job created with `key`, or nullopt.
  absl::StatusOr<std::optional<std::string>> FindIdempotencyKey(absl::string_view key) const;
  // Calls `fn` for each event of the job with sequence >= from_sequence, in order, until it returns false.
  absl::Status ScanEvents(absl::string_view job_id, int64_t from_sequence,
                          const std::function<bool(const v1::JobEvent&)>& fn) const;

  static std::string EventKey(absl::string_view job_id, int64_t sequence);
  static std::string OutboxKey(absl::string_view job_id, int iteration);

 private:
  storage::KvStore* kv_;
};

}  // namespace accelopt::orchestrator

#include "services/orchestrator/job_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "libs/core/bounded_text.h"

namespace accelopt::orchestrator {
namespace {

constexpr char kJobs[] = "jobs";
constexpr char kCandidates[] = "candidates";
constexpr char kEvents[] = "events";
constexpr char kIndex[] = "index";

std::string PlanKey(absl::string_view job_id, int iteration, absl::string_view parent_id) {
  return absl::StrCat("plan/", job_id, "/", iteration, "/", parent_id);
}

template <typename Message>
absl::StatusOr<Message> Parse(absl::string_view value, absl::string_view what) {
  Message m;
  if (!m.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError(absl::StrCat("corrupt ", what));
  }
  return m;
}

}  // namespace

void Transaction::PutJob(const v1::JobRecord& record) {
  batch_.Put(kJobs, record.job().job_id(), record.SerializeAsString());
}

void Transaction::PutCandidate(const v1::Candidate& candidate) {
  batch_.Put(kCandidates, absl::StrCat(candidate.job_id(), "/", candidate.candidate_id()),
             candidate.SerializeAsString());
  candidates_[candidate.candidate_id()] = candidate;
}

void Transaction::PutPlans(absl::string_view job_id, int iteration, absl::string_view parent_id,
                           const v1::PlanResponse& plans) {
  batch_.Put(kIndex, PlanKey(job_id, iteration, parent_id), plans.SerializeAsString());
}

void Transaction::PutIdempotencyKey(absl::string_view key, absl::string_view job_id) {
  batch_.Put(kIndex, absl::StrCat("idem/", key), job_id);
}

void Transaction::PutOutbox(const v1::SummarizeIterationRequest& request) {
  batch_.Put(kIndex, JobStore::OutboxKey(request.job_id(), request.iteration()), request.SerializeAsString());
}

void Transaction::DeleteOutbox(absl::string_view job_id, int iteration) {
  batch_.Delete(kIndex, JobStore::OutboxKey(job_id, iteration));
}

void Transaction::AddEvent(v1::JobRecord* record, v1::JobEvent event) {
  if (record->next_sequence() < 1) record->set_next_sequence(1);
  event.set_sequence(record->next_sequence());
  record->set_next_sequence(record->next_sequence() + 1);
  event.set_job_id(record->job().job_id());
  *event.mutable_time() = google::protobuf::util::TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(absl::Now()));
  batch_.Put(kEvents, JobStore::EventKey(event.job_id(), event.sequence()), event.SerializeAsString());
  events_.push_back(std::move(event));
}

std::string JobStore::EventKey(absl::string_view job_id, int64_t sequence) {
  return absl::StrFormat("%s/%020d", job_id, sequence);
}

std::string JobStore::OutboxKey(absl::string_view job_id, int iteration) {
  return absl::StrFormat("outbox/%s/%06d", job_id, iteration);
}

absl::StatusOr<std::vector<v1::SummarizeIterationRequest>> JobStore::LoadOutbox() const {
  std::vector<v1::SummarizeIterationRequest> entries;
  absl::Status parse_error;
  absl::Status s = kv_->Scan(kIndex, "outbox/", [&](absl::string_view key, absl::string_view value) {
    auto entry = Parse<v1::SummarizeIterationRequest>(value, key);
    if (!entry.ok()) {
      parse_error = entry.status();
      return false;
    }
    entries.push_back(*std::move(entry));
    return true;
  });
  if (!s.ok()) return s;
  if (!parse_error.ok()) return parse_error;
  return entries;
}

absl::Status JobStore::Commit(Transaction txn) { return kv_->Write(std::move(txn.batch_)); }

absl::StatusOr<std::vector<v1::JobRecord>> JobStore::LoadJobs() const {
  std::vector<v1::JobRecord> records;
  absl::Status parse_error;
  absl::Status s = kv_->Scan(kJobs, "", [&](absl::string_view key, absl::string_view value) {
    auto record = Parse<v1::JobRecord>(value, absl::StrCat("job record ", key));
    if (!record.ok()) {
      parse_error = record.status();
      return false;
    }
    records.push_back(*std::move(record));
    return true;
  });
  if (!s.ok()) return s;
  if (!parse_error.ok()) return parse_error;
  return records;
}

absl::StatusOr<v1::JobRecord> JobStore::LoadJob(absl::string_view job_id) const {
  auto value = kv_->Get(kJobs, job_id);
  if (absl::IsNotFound(value.status())) {
    return absl::NotFoundError(absl::StrCat("job ", core::BoundedText(job_id, 128), " not found"));
  }
  if (!value.ok()) return value.status();
  return Parse<v1::JobRecord>(*value, absl::StrCat("job record ", job_id));
}

absl::StatusOr<std::vector<v1::Candidate>> JobStore::LoadCandidates(absl::string_view job_id) const {
  std::vector<v1::Candidate> candidates;
  absl::Status parse_error;
  absl::Status s =
      kv_->Scan(kCandidates, absl::StrCat(job_id, "/"), [&](absl::string_view key, absl::string_view value) {
        auto c = Parse<v1::Candidate>(value, absl::StrCat("candidate ", key));
        if (!c.ok()) {
          parse_error = c.status();
          return false;
        }
        candidates.push_back(*std::move(c));
        return true;
      });
  if (!s.ok()) return s;
  if (!parse_error.ok()) return parse_error;
  return candidates;
}

absl::StatusOr<std::optional<v1::PlanResponse>> JobStore::LoadPlans(absl::string_view job_id, int iteration,
                                                                    absl::string_view parent_id) const {
  auto value = kv_->Get(kIndex, PlanKey(job_id, iteration, parent_id));
  if (absl::IsNotFound(value.status())) return std::optional<v1::PlanResponse>();
  if (!value.ok()) return value.status();
  auto plans = Parse<v1::PlanResponse>(*value, PlanKey(job_id, iteration, parent_id));
  if (!plans.ok()) return plans.status();
  return std::optional<v1::PlanResponse>(*std::move(plans));
}

absl::StatusOr<std::optional<std::string>> JobStore::FindIdempotencyKey(absl::string_view key) const {
  auto value = kv_->Get(kIndex, absl::StrCat("idem/", key));
  if (absl::IsNotFound(value.status())) return std::optional<std::string>();
  if (!value.ok()) return value.status();
  return std::optional<std::string>(*value);
}

absl::Status JobStore::ScanEvents(absl::string_view job_id, int64_t from_sequence,
                                  const std::function<bool(const v1::JobEvent&)>& fn) const {
  const std::string start = EventKey(job_id, std::max<int64_t>(from_sequence, 1));
  absl::Status parse_error;
  absl::Status s = kv_->Scan(kEvents, absl::StrCat(job_id, "/"), [&](absl::string_view key, absl::string_view value) {
    if (key < start) return true;
    auto event = Parse<v1::JobEvent>(value, absl::StrCat("event ", key));
    if (!event.ok()) {
      parse_error = event.status();
      return false;
    }
    return fn(*event);
  });
  if (!s.ok()) return s;
  return parse_error;
}

}  // namespace accelopt::orchestrator

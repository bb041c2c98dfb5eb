// The summarization outbox: an iteration's summary for the memory service is stored in the same atomic
// commit as the iteration's end, delivered, retried with backoff until memory acknowledges it, and deleted
// with the acknowledgement (memory's writes are idempotent per namespace, job and iteration, so a delivery
// repeated after a crash stores nothing twice). Entries are resumed when the engine starts. A job waits for
// its summary up to Options::summarize_wait, then goes on without it (ExperiencesPending event) while the
// delivery continues, also after the job ended.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/core/log.h"
#include "services/orchestrator/job_engine.h"
#include "services/orchestrator/job_engine_internal.h"
#include "services/orchestrator/request_builders.h"

namespace accelopt::orchestrator {

bool JobEngine::Summarize(Run& run, Transaction txn) {
  const int t = run.record.iteration();
  const std::string job_id = run.id();
  v1::SummarizeIterationRequest request = BuildSummarizeRequest(run.spec(), job_id, t, run.candidates);
  if (request.samples().empty()) {
    if (!Commit(run, std::move(txn))) return false;
    Post([this, job_id, t] { OnSummarized(job_id, t, v1::SummarizeIterationResponse(), Transaction()); });
    return true;
  }
  txn.PutOutbox(request);
  if (!Commit(run, std::move(txn))) return false;
  const std::string key = JobStore::OutboxKey(job_id, t);
  auto entry = std::make_unique<OutboxEntry>(io_);
  entry->request = std::move(request);
  outbox_[key] = std::move(entry);
  run.summarize_since = absl::Now();
  Deliver(key);
  return true;
}

void JobEngine::Deliver(const std::string& key) {
  auto it = outbox_.find(key);
  if (it == outbox_.end()) return;
  OutboxEntry& entry = *it->second;
  ++entry.attempts;
  entry.call = clients_.memory->SummarizeIteration(
      entry.request, options_.agent_timeout,
      OnLoop<v1::SummarizeIterationResponse>([this, key](absl::StatusOr<v1::SummarizeIterationResponse> response) {
        OnDelivered(key, std::move(response));
      }));
}

void JobEngine::OnDelivered(const std::string& key, absl::StatusOr<v1::SummarizeIterationResponse> response) {
  auto it = outbox_.find(key);
  if (it == outbox_.end()) return;
  OutboxEntry& entry = *it->second;
  entry.call.reset();
  const std::string job_id = entry.request.job_id();
  const int iteration = entry.request.iteration();
  if (!response.ok()) {
    entry.backoff = entry.backoff == absl::ZeroDuration() ? options_.outbox_initial_backoff
                                                          : std::min(2 * entry.backoff, options_.outbox_max_backoff);
    const double jitter = std::uniform_real_distribution<double>(0.5, 1.0)(random_);
    ACCELOPT_LOG(WARNING).With("job_id", job_id) << "iteration " << iteration << " summary not delivered (attempt "
                                                 << entry.attempts << "), retrying: " << response.status().message();
    entry.last_error = std::string(response.status().message());
    entry.timer.expires_after(absl::ToChronoMilliseconds(entry.backoff * jitter));
    entry.timer.async_wait([this, key](const boost::system::error_code& ec) {
      if (!ec) Deliver(key);
    });
    return;
  }
  Transaction txn;
  txn.DeleteOutbox(job_id, iteration);
  outbox_.erase(it);
  if (FindActive(job_id, iteration, v1::JobRecord::PHASE_SUMMARIZING) != nullptr) {
    OnSummarized(job_id, iteration, std::move(response), std::move(txn));
    return;
  }
  // The job went on (or ended) without waiting: the experiences are stored, the entry is done.
  ACCELOPT_LOG(INFO).With("job_id", job_id)
      << "iteration " << iteration << " summary delivered after the job went on: " << response->added_size()
      << " experiences";
  if (absl::Status s = store_->Commit(std::move(txn)); !s.ok()) {
    ACCELOPT_LOG(ERROR).With("job_id", job_id) << "cannot delete a delivered outbox entry: " << s.message();
  }
}

void JobEngine::CheckSummarizeWait(Run& run) {
  if (run.record.phase() != v1::JobRecord::PHASE_SUMMARIZING ||
      absl::Now() - run.summarize_since < options_.summarize_wait) {
    return;
  }
  const int t = run.record.iteration();
  auto it = outbox_.find(JobStore::OutboxKey(run.id(), t));
  const std::string error = it == outbox_.end() || it->second->last_error.empty()
                                ? "no acknowledgement from the memory service"
                                : it->second->last_error;
  OnSummarized(run.id(), t,
               absl::UnavailableError(absl::StrCat("not acknowledged within ",
                                                   absl::FormatDuration(options_.summarize_wait), ": ", error)),
               Transaction());
}

}  // namespace accelopt::orchestrator

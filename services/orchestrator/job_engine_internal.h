// Internals shared by the job engine's parts (job_engine.cc: loop and API; job_search.cc: the per-job search
// state machine; job_commit.cc: commits, stops and store errors; profile_dispatch.cc: the profile
// dispatcher). Not for use outside the engine.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/orchestrator/job_engine.h"

namespace accelopt::orchestrator {

// Posts closures onto the engine's io_context while the engine lives; afterwards drops them. Completions
// of outbound calls hold it by shared_ptr, so a late completion never touches a destroyed engine.
class JobEngine::Mailbox {
 public:
  explicit Mailbox(boost::asio::io_context* io) : io_(io) {}
  void Post(absl::AnyInvocable<void() &&> fn) {
    absl::MutexLock lock(&mu_);
    if (io_ == nullptr) return;
    // asio handlers must be copyable in Boost 1.74: hold the move-only closure by shared_ptr.
    auto shared = std::make_shared<absl::AnyInvocable<void() &&>>(std::move(fn));
    boost::asio::post(*io_, [shared] { std::move (*shared)(); });
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    io_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  boost::asio::io_context* io_ ABSL_GUARDED_BY(mu_);
};

// An iteration summary not yet acknowledged by the memory service.
struct JobEngine::OutboxEntry {
  explicit OutboxEntry(boost::asio::io_context& io) : timer(io) {}
  v1::SummarizeIterationRequest request;
  absl::Duration backoff = absl::ZeroDuration();
  int attempts = 0;
  std::string last_error;
  std::shared_ptr<CallHandle> call;
  boost::asio::steady_timer timer;
};

// One QUEUED or RUNNING job.
struct JobEngine::Run {
  v1::JobRecord record;
  std::map<std::string, v1::Candidate> candidates;
  // Kernel sha256 -> the candidate that was (or will be) profiled for it.
  std::map<std::string, std::string> original_by_hash;
  // A running profile whose candidate became a DUPLICATE -> the candidate its result now belongs to.
  std::map<std::string, std::string> profile_handed_to;
  // Final candidates of record.iteration.
  int iteration_final = 0;
  // Beam members of this iteration whose re-measurement (search.reprofile_beam) has not come back.
  int remeasures_pending = 0;
  // When record.iteration began in this process (for the iteration-duration histogram; unset after a resume).
  absl::Time iteration_started = absl::InfinitePast();
  std::map<uint64_t, std::shared_ptr<CallHandle>> calls;
  absl::Time running_since;
  double wall_base = 0;
  // RUNNING and not stopping: completions for inactive runs are dropped.
  bool active = false;
  std::vector<std::shared_ptr<EventSink>> watchers;
  // What the store holds for the job: the state after its last committed transition.
  v1::JobRecord committed_record;
  std::map<std::string, v1::Candidate> committed_candidates;
  // The first store error of the job. Once set the job writes nothing more but the record of its failure.
  absl::Status store_error;
  // Agent retries not yet reported in an AgentRetried event, per agent.
  struct RetryTally {
    absl::Time last_event = absl::InfinitePast();
    int pending = 0;
    std::string method;
    std::string error;
  };
  std::map<std::string, RetryTally> retry_tallies;
  // Since when the job waits in PHASE_SUMMARIZING for its summary's acknowledgement.
  absl::Time summarize_since = absl::InfiniteFuture();

  v1::Job& job() { return *record.mutable_job(); }
  const v1::JobSpec& spec() const { return record.job().spec(); }
  const std::string& id() const { return record.job().job_id(); }
};

template <typename T>
Callback<T> JobEngine::OnLoop(absl::AnyInvocable<void(absl::StatusOr<T>) &&> fn) {
  return [mailbox = mailbox_, fn = std::move(fn)](absl::StatusOr<T> result) mutable {
    mailbox->Post([fn = std::move(fn), result = std::move(result)]() mutable { std::move(fn)(std::move(result)); });
  };
}

template <typename Response>
void JobEngine::CallOnStage(StageQueue& stage, const std::string& job_id, int iteration, v1::JobRecord::Phase phase,
                            StageStart<Response> start, Callback<Response> done) {
  stage.Enqueue([this, &stage, job_id, iteration, phase, start = std::move(start),
                 done = std::move(done)]() mutable -> bool {
    Run* run = FindActive(job_id, iteration, phase);
    if (run == nullptr) return false;
    auto call_id = std::make_shared<uint64_t>(0);
    *call_id = Track(
        *run, std::move(start)(OnLoop<Response>([this, &stage, job_id, iteration, phase, call_id,
                                                 done = std::move(done)](absl::StatusOr<Response> response) mutable {
          stage.Release();
          Run* run = FindActive(job_id, iteration, phase);
          if (run == nullptr || !Untrack(*run, *call_id)) return;
          std::move(done)(std::move(response));
        })));
    return true;
  });
}

}  // namespace accelopt::orchestrator

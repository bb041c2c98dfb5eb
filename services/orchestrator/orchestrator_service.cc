#include "services/orchestrator/orchestrator_service.h"

#include <deque>
#include <limits>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libs/core/bounded_text.h"
#include "libs/core/status_convert.h"
#include "libs/security/namespace_policy.h"

namespace accelopt::orchestrator {
namespace {

// A callback that copies the engine's answer into `response` and finishes the RPC.
template <typename T>
Callback<T> FinishWith(grpc::ServerUnaryReactor* reactor, T* response) {
  return [reactor, response](absl::StatusOr<T> result) {
    if (result.ok()) *response = *std::move(result);
    reactor->Finish(core::ToGrpcStatus(result.status()));
  };
}

// Job ids are "job-" and 12 hex digits; anything much longer is refused before it reaches a lookup or the audit log.
constexpr size_t kMaxJobIdBytes = 128;

absl::Status RequireJobId(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  if (job_id.size() > kMaxJobIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("job_id: longer than ", kMaxJobIdBytes, " bytes"));
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* Reject(grpc::CallbackServerContext* context, const absl::Status& status) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(core::ToGrpcStatus(status));
  return reactor;
}

bool ActsForAll(const security::Principal& principal) {
  return principal.role == security::Role::kAdmin || principal.role == security::Role::kInternal;
}

// The tenant owning a job; jobs stored before jobs had owners belong to "default".
std::string OwnerOf(const v1::Job& job) { return job.spec().owner().empty() ? "default" : job.spec().owner(); }

// What a caller of another tenant gets: exactly the engine's answer for a job that does not exist.
absl::Status JobNotFound(const std::string& job_id) {
  // the id is the caller's: echoed whole, a 100 KB id made the status larger than a client's metadata limit
  return absl::NotFoundError(absl::StrCat("job ", core::BoundedText(job_id, 128), " not found"));
}

// Runs `then` with OK when `principal` may see the job, else with NOT_FOUND (or the engine's error).
void WithVisibleJob(JobEngine* engine, const std::string& job_id, const security::Principal& principal,
                    absl::AnyInvocable<void(absl::Status) &&> then) {
  if (ActsForAll(principal)) {  // admins and internal callers see every job
    std::move(then)(absl::OkStatus());
    return;
  }
  engine->GetJob(job_id,
                 [job_id, tenant = principal.tenant, then = std::move(then)](absl::StatusOr<v1::Job> job) mutable {
                   if (!job.ok()) return std::move(then)(job.status());
                   std::move(then)(OwnerOf(*job) == tenant ? absl::OkStatus() : JobNotFound(job_id));
                 });
}

class WatchReactor;

// Queues the engine's events for one WatchJob stream and writes them one at a time. Shared by the reactor
// and the engine; once the reactor is done it is detached and drops everything.
class WatchSink : public EventSink {
 public:
  explicit WatchSink(grpc::ServerWriteReactor<v1::JobEvent>* reactor) : reactor_(reactor) {}

  void OnEvents(const std::vector<v1::JobEvent>& events) override {
    {
      absl::MutexLock lock(&mu_);
      pending_.insert(pending_.end(), events.begin(), events.end());
    }
    Pump();
  }
  void OnEnd(const absl::Status& status) override {
    {
      absl::MutexLock lock(&mu_);
      if (!end_.has_value()) end_ = status;
    }
    Pump();
  }
  void WriteDone(bool ok) {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        pending_.clear();
        end_ = absl::CancelledError("the client went away");
      }
    }
    Pump();
  }
  void Cancelled() {
    {
      absl::MutexLock lock(&mu_);
      pending_.clear();
      end_ = absl::CancelledError("the client cancelled the watch");
    }
    Pump();
  }
  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }
  bool detached() {
    absl::MutexLock lock(&mu_);
    return reactor_ == nullptr;
  }

 private:
  // Starts the next write, or finishes the stream once everything is written. Stream operations run
  // outside the lock (their reactions may run on another thread and take it).
  void Pump() {
    grpc::ServerWriteReactor<v1::JobEvent>* reactor = nullptr;
    bool finish = false;
    absl::Status status;
    {
      absl::MutexLock lock(&mu_);
      if (reactor_ == nullptr || writing_ || finished_) return;
      if (!pending_.empty()) {
        current_ = std::move(pending_.front());
        pending_.pop_front();
        writing_ = true;
      } else if (end_.has_value()) {
        finished_ = true;
        finish = true;
        status = *end_;
      } else {
        return;
      }
      reactor = reactor_;
    }
    if (finish) {
      reactor->Finish(core::ToGrpcStatus(status));
    } else {
      reactor->StartWrite(&current_);
    }
  }

  absl::Mutex mu_;
  grpc::ServerWriteReactor<v1::JobEvent>* reactor_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::JobEvent> pending_ ABSL_GUARDED_BY(mu_);
  // Set under mu_ when a write starts, then read by that write only (writing_ keeps it unchanged meanwhile).
  v1::JobEvent current_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
};

class WatchReactor : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  // `principal` is the authorized caller, or the authorization error that ends the stream at once.
  WatchReactor(JobEngine* engine, security::CallAuthorizer* authorizer, const v1::WatchJobRequest& request,
               const absl::StatusOr<security::Principal>& principal)
      : engine_(engine), sink_(std::make_shared<WatchSink>(this)) {
    if (!principal.ok()) {
      sink_->OnEnd(principal.status());
    } else if (absl::Status id = RequireJobId(request.job_id()); !id.ok()) {
      sink_->OnEnd(id);
    } else if (request.from_sequence() < 0) {
      sink_->OnEnd(absl::InvalidArgumentError("from_sequence: must not be negative"));
    } else {
      // The engine and the sink outlive this reactor; the check may finish after the client went away.
      WithVisibleJob(engine_, request.job_id(), *principal,
                     [engine = engine_, sink = sink_, job_id = request.job_id(), from = request.from_sequence(),
                      authorizer, principal = *principal](absl::Status visible) {
                       if (!visible.ok()) {
                         authorizer->Audit("watch", &principal, "job/" + job_id, visible);  // every refusal
                         return sink->OnEnd(visible);
                       }
                       if (!sink->detached()) engine->Watch(job_id, from, sink);
                     });
    }
  }
  void OnWriteDone(bool ok) override { sink_->WriteDone(ok); }
  void OnCancel() override { sink_->Cancelled(); }
  void OnDone() override {
    sink_->Detach();
    engine_->Unwatch(sink_);
    delete this;
  }

 private:
  JobEngine* engine_;
  std::shared_ptr<WatchSink> sink_;
};

}  // namespace

grpc::ServerUnaryReactor* JobServiceImpl::SubmitJob(grpc::CallbackServerContext* context,
                                                    const v1::SubmitJobRequest* request,
                                                    v1::SubmitJobResponse* response) {
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kSubmitter, "submit", "job/new");
  if (!principal.ok()) return Reject(context, principal.status());
  v1::SubmitJobRequest owned = *request;
  owned.mutable_spec()->set_owner(principal->tenant);
  const std::string& memory_namespace = owned.spec().search().memory_namespace();
  if (!memory_namespace.empty() && memory_namespace != "job") {
    if (absl::Status s = security::CheckNamespaceUse(*principal, memory_namespace, authorizer_.namespace_grants());
        !s.ok()) {
      authorizer_.Audit("submit", &*principal, "job/new", s);
      return Reject(context, s);
    }
  }
  // Idempotency keys are per tenant: another tenant's key never returns (or reveals) its job.
  if (authorizer_.enabled() && !owned.idempotency_key().empty()) {
    owned.set_idempotency_key(absl::StrCat(principal->tenant, "/", owned.idempotency_key()));
  }
  auto* reactor = context->DefaultReactor();
  // Submits once the agent services accepted the job's models (when they are asked), and audits the outcome.
  auto submit = [this, reactor, response, owned, principal = *principal]() {
    engine_->SubmitJob(owned, [this, reactor, response, principal](absl::StatusOr<v1::SubmitJobResponse> result) {
      authorizer_.Audit("submit", &principal, result.ok() ? "job/" + result->job().job_id() : "job/new",
                        result.status(), result.ok() && !result->created() ? "idempotent repeat" : "");
      if (result.ok()) *response = *std::move(result);
      reactor->Finish(core::ToGrpcStatus(result.status()));
    });
  };
  if (providers_ == nullptr) {
    submit();
    return reactor;
  }
  providers_->Check(ResolveJobModels(owned.spec()),
                    [this, reactor, submit, principal = *principal](absl::Status checked) {
                      if (!checked.ok()) {
                        authorizer_.Audit("submit", &principal, "job/new", checked);
                        return reactor->Finish(core::ToGrpcStatus(checked));
                      }
                      submit();
                    });
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::GetJob(grpc::CallbackServerContext* context, const v1::GetJobRequest* request,
                                                 v1::Job* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) return Reject(context, s);
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kViewer, "get", "job/" + request->job_id());
  if (!principal.ok()) return Reject(context, principal.status());
  auto* reactor = context->DefaultReactor();
  engine_->GetJob(request->job_id(), [this, reactor, response, principal = *principal,
                                      job_id = request->job_id()](absl::StatusOr<v1::Job> job) {
    if (job.ok() && !principal.ActsFor(OwnerOf(*job))) job = JobNotFound(job_id);
    if (!job.ok()) authorizer_.Audit("get", &principal, "job/" + job_id, job.status());  // every refusal
    if (job.ok()) *response = *std::move(job);
    reactor->Finish(core::ToGrpcStatus(job.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::ListJobs(grpc::CallbackServerContext* context,
                                                   const v1::ListJobsRequest* request, v1::ListJobsResponse* response) {
  if (request->limit() < 0) return Reject(context, absl::InvalidArgumentError("limit: must not be negative"));
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kViewer, "list", "jobs");
  if (!principal.ok()) return Reject(context, principal.status());
  auto* reactor = context->DefaultReactor();
  if (ActsForAll(*principal)) {
    engine_->ListJobs(*request, FinishWith(reactor, response));
    return reactor;
  }
  // A tenant's newest `limit` jobs: ask for every job, keep the tenant's, then cut.
  v1::ListJobsRequest all = *request;
  all.set_limit(std::numeric_limits<int32_t>::max());
  const int limit = request->limit() > 0 ? request->limit() : 100;
  engine_->ListJobs(
      all, [reactor, response, limit, tenant = principal->tenant](absl::StatusOr<v1::ListJobsResponse> result) {
        if (result.ok()) {
          for (v1::Job& job : *result->mutable_jobs()) {
            if (response->jobs_size() >= limit) break;
            if (OwnerOf(job) == tenant) *response->add_jobs() = std::move(job);
          }
        }
        reactor->Finish(core::ToGrpcStatus(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::CancelJob(grpc::CallbackServerContext* context,
                                                    const v1::CancelJobRequest* request, v1::Job* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) return Reject(context, s);
  const std::string target = "job/" + request->job_id();
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kSubmitter, "cancel", target);
  if (!principal.ok()) return Reject(context, principal.status());
  auto* reactor = context->DefaultReactor();
  WithVisibleJob(
      engine_, request->job_id(), *principal,
      [this, reactor, response, target, principal = *principal, job_id = request->job_id()](absl::Status visible) {
        auto finish = [this, reactor, response, target, principal](absl::StatusOr<v1::Job> job) {
          authorizer_.Audit("cancel", &principal, target, job.status());
          if (job.ok()) *response = *std::move(job);
          reactor->Finish(core::ToGrpcStatus(job.status()));
        };
        if (!visible.ok()) return finish(visible);
        engine_->CancelJob(job_id, std::move(finish));
      });
  return reactor;
}

grpc::ServerWriteReactor<v1::JobEvent>* JobServiceImpl::WatchJob(grpc::CallbackServerContext* context,
                                                                 const v1::WatchJobRequest* request) {
  return new WatchReactor(
      engine_, &authorizer_, *request,
      authorizer_.Authorize(*context, security::Role::kViewer, "watch", "job/" + request->job_id()));
}

namespace {

// Runs the engine call `start` once the caller may read the job; finishes with the authorization error
// otherwise.
template <typename T>
grpc::ServerUnaryReactor* ReadJobPart(grpc::CallbackServerContext* context, JobEngine* engine,
                                      security::CallAuthorizer& authorizer, const std::string& job_id,
                                      absl::string_view action, T* response,
                                      absl::AnyInvocable<void(Callback<T>) &&> start) {
  if (absl::Status s = RequireJobId(job_id); !s.ok()) return Reject(context, s);
  absl::StatusOr<security::Principal> principal =
      authorizer.Authorize(*context, security::Role::kViewer, action, "job/" + job_id);
  if (!principal.ok()) return Reject(context, principal.status());
  auto* reactor = context->DefaultReactor();
  WithVisibleJob(engine, job_id, *principal,
                 [reactor, response, start = std::move(start), authorizer = &authorizer, principal = *principal,
                  action = std::string(action), job_id](absl::Status visible) mutable {
                   if (!visible.ok()) {
                     authorizer->Audit(action, &principal, "job/" + job_id, visible);  // every refusal
                     return reactor->Finish(core::ToGrpcStatus(visible));
                   }
                   std::move(start)(FinishWith(reactor, response));
                 });
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* JobServiceImpl::ListCandidates(grpc::CallbackServerContext* context,
                                                         const v1::ListCandidatesRequest* request,
                                                         v1::ListCandidatesResponse* response) {
  return ReadJobPart<v1::ListCandidatesResponse>(
      context, engine_, authorizer_, request->job_id(), "list_candidates", response,
      [engine = engine_, request = *request](Callback<v1::ListCandidatesResponse> done) {
        engine->ListCandidates(request, std::move(done));
      });
}

grpc::ServerUnaryReactor* JobServiceImpl::GetJobReport(grpc::CallbackServerContext* context,
                                                       const v1::GetJobReportRequest* request,
                                                       v1::JobReport* response) {
  return ReadJobPart<v1::JobReport>(context, engine_, authorizer_, request->job_id(), "get_report", response,
                                    [engine = engine_, job_id = request->job_id()](Callback<v1::JobReport> done) {
                                      engine->GetJobReport(job_id, std::move(done));
                                    });
}

}  // namespace accelopt::orchestrator

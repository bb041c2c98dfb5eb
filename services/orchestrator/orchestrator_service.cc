#include "services/orchestrator/orchestrator_service.h"

#include <deque>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "libs/core/status_convert.h"

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

absl::Status RequireJobId(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* Reject(grpc::CallbackServerContext* context, const absl::Status& status) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(core::ToGrpcStatus(status));
  return reactor;
}

class WatchReactor;

// Queues the engine's events for one WatchJob stream and writes them one at a time. Shared by the reactor
// and the engine; once the reactor is done it is detached and drops everything.
class WatchSink : public EventSink {
 public:
  explicit WatchSink(grpc::ServerWriteReactor<v1::JobEvent>* reactor) : reactor_(reactor) {}

  void OnEvents(const std::vector<v1::JobEvent>& events) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.insert(pending_.end(), events.begin(), events.end());
    }
    Pump();
  }
  void OnEnd(const absl::Status& status) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!end_.has_value()) end_ = status;
    }
    Pump();
  }
  void WriteDone(bool ok) {
    {
      std::lock_guard<std::mutex> lock(mu_);
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
      std::lock_guard<std::mutex> lock(mu_);
      pending_.clear();
      end_ = absl::CancelledError("the client cancelled the watch");
    }
    Pump();
  }
  void Detach() {
    std::lock_guard<std::mutex> lock(mu_);
    reactor_ = nullptr;
  }

 private:
  // Starts the next write, or finishes the stream once everything is written. Stream operations run
  // outside the lock (their reactions may run on another thread and take it).
  void Pump() {
    grpc::ServerWriteReactor<v1::JobEvent>* reactor = nullptr;
    bool finish = false;
    absl::Status status;
    {
      std::lock_guard<std::mutex> lock(mu_);
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

  std::mutex mu_;
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
  WatchReactor(JobEngine* engine, const v1::WatchJobRequest& request)
      : engine_(engine), sink_(std::make_shared<WatchSink>(this)) {
    if (request.job_id().empty()) {
      sink_->OnEnd(absl::InvalidArgumentError("job_id: must not be empty"));
    } else if (request.from_sequence() < 0) {
      sink_->OnEnd(absl::InvalidArgumentError("from_sequence: must not be negative"));
    } else {
      engine_->Watch(request.job_id(), request.from_sequence(), sink_);
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
  auto* reactor = context->DefaultReactor();
  if (providers_ == nullptr) {
    engine_->SubmitJob(*request, FinishWith(reactor, response));
    return reactor;
  }
  providers_->Check(request->spec().models(), [this, request, reactor, response](absl::Status checked) {
    if (!checked.ok()) return reactor->Finish(core::ToGrpcStatus(checked));
    engine_->SubmitJob(*request, FinishWith(reactor, response));
  });
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::GetJob(grpc::CallbackServerContext* context, const v1::GetJobRequest* request,
                                                 v1::Job* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) return Reject(context, s);
  auto* reactor = context->DefaultReactor();
  engine_->GetJob(request->job_id(), FinishWith(reactor, response));
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::ListJobs(grpc::CallbackServerContext* context,
                                                   const v1::ListJobsRequest* request, v1::ListJobsResponse* response) {
  if (request->limit() < 0) return Reject(context, absl::InvalidArgumentError("limit: must not be negative"));
  auto* reactor = context->DefaultReactor();
  engine_->ListJobs(*request, FinishWith(reactor, response));
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::CancelJob(grpc::CallbackServerContext* context,
                                                    const v1::CancelJobRequest* request, v1::Job* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) return Reject(context, s);
  auto* reactor = context->DefaultReactor();
  engine_->CancelJob(request->job_id(), FinishWith(reactor, response));
  return reactor;
}

grpc::ServerWriteReactor<v1::JobEvent>* JobServiceImpl::WatchJob(grpc::CallbackServerContext* context,
                                                                 const v1::WatchJobRequest* request) {
  return new WatchReactor(engine_, *request);
}

grpc::ServerUnaryReactor* JobServiceImpl::ListCandidates(grpc::CallbackServerContext* context,
                                                         const v1::ListCandidatesRequest* request,
                                                         v1::ListCandidatesResponse* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) return Reject(context, s);
  auto* reactor = context->DefaultReactor();
  engine_->ListCandidates(*request, FinishWith(reactor, response));
  return reactor;
}

grpc::ServerUnaryReactor* JobServiceImpl::GetJobReport(grpc::CallbackServerContext* context,
                                                       const v1::GetJobReportRequest* request,
                                                       v1::JobReport* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) return Reject(context, s);
  auto* reactor = context->DefaultReactor();
  engine_->GetJobReport(request->job_id(), FinishWith(reactor, response));
  return reactor;
}

}  // namespace accelopt::orchestrator

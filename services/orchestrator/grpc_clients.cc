#include "services/orchestrator/grpc_clients.h"

#include <grpcpp/alarm.h>
#include <grpcpp/create_channel.h>

#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/core/status_convert.h"

namespace accelopt::orchestrator {
namespace {

constexpr int kMaxMessageBytes = 64 << 20;

// The job a request is for, to attribute its retries.
template <typename Request>
std::string JobIdOf(const Request& request) {
  if constexpr (requires { request.job_id(); }) {
    return request.job_id();
  } else {
    return "";
  }
}

// One call to a service: its attempts (one unless retried), each with its own context, until the response
// or the final error has been reported to `done`.
template <typename Request, typename Response>
class RetryingCall : public CallHandle, public std::enable_shared_from_this<RetryingCall<Request, Response>> {
 public:
  using Start = std::function<void(grpc::ClientContext*, const Request*, Response*, std::function<void(grpc::Status)>)>;

  // `retry` null: no retries. `agent`/`method` name the call in metrics and retry events.
  RetryingCall(CallsInFlight::Token token, Request request, absl::Duration deadline, Callback<Response> done,
               Start start, const AgentRetryOptions* retry, std::string agent, std::string method)
      : token_(std::move(token)),
        request_(std::move(request)),
        done_(std::move(done)),
        start_(std::move(start)),
        retry_(retry),
        agent_(std::move(agent)),
        method_(std::move(method)),
        job_id_(JobIdOf(request_)),
        deadline_(absl::Now() + deadline),
        schedule_(retry != nullptr ? retry->policy : AgentRetryPolicy{.max_elapsed = absl::ZeroDuration()}, absl::Now(),
                  deadline_) {}

  void Cancel() override {
    grpc::ClientContext* context = nullptr;
    grpc::Alarm* alarm = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return;
      cancelled_ = true;
      context = context_;
      alarm = alarm_;
    }
    // Both are kept alive as long as this call; cancelling a finished one is a no-op.
    if (alarm != nullptr) alarm->Cancel();
    if (context != nullptr) context->TryCancel();
  }

  void Attempt() {
    grpc::ClientContext* context = nullptr;
    {
      absl::MutexLock lock(&mu_);
      alarm_ = nullptr;
      if (!cancelled_) {
        contexts_.push_back(std::make_unique<grpc::ClientContext>());
        context = contexts_.back().get();
        context->set_deadline(absl::ToChronoTime(deadline_));
        context_ = context;
        response_ = Response();
      }
    }
    if (context == nullptr) return std::move(done_)(absl::CancelledError("the call was cancelled"));
    start_(context, &request_, &response_,
           [self = this->shared_from_this()](grpc::Status status) { self->OnAttemptDone(std::move(status)); });
  }

 private:
  void OnAttemptDone(grpc::Status status) {
    if (status.ok()) return std::move(done_)(std::move(response_));
    const absl::Status failed = core::FromGrpcStatus(status);
    std::optional<absl::Duration> wait;
    {
      absl::MutexLock lock(&mu_);
      context_ = nullptr;
      if (!cancelled_) wait = schedule_.NextBackoff(failed, absl::Now());
      if (wait.has_value()) {
        alarms_.push_back(std::make_unique<grpc::Alarm>());
        alarm_ = alarms_.back().get();
        // A grpc::Alarm keeps its callback until the alarm is destroyed, so a callback owning this call would
        // make a cycle through alarms_: the backoff's own reference is dropped when it fires instead.
        backoff_owner_ = this->shared_from_this();
        alarm_->Set(absl::ToChronoTime(absl::Now() + *wait), [this](bool) {
          std::shared_ptr<RetryingCall> self;
          {
            absl::MutexLock lock(&mu_);
            self = std::move(backoff_owner_);
          }
          self->Attempt();
        });
      }
    }
    if (!wait.has_value()) {
      const absl::Status final_status = schedule_.GiveUp(failed, absl::Now());
      if (schedule_.retries() > 0 && !absl::IsCancelled(failed) && retry_->on_retry) {
        retry_->on_retry({agent_, method_, final_status, schedule_.retries(), absl::ZeroDuration(), job_id_, true});
      }
      return std::move(done_)(final_status);
    }
    const std::string code = absl::StatusCodeToString(failed.code());
    if (retry_->metrics != nullptr) retry_->metrics->CountAgentRetry(agent_, code);
    if (retry_->on_retry) retry_->on_retry({agent_, method_, failed, schedule_.retries(), *wait, job_id_, false});
  }

  const CallsInFlight::Token token_;  // first: released after the contexts below
  Request request_;
  Response response_;
  Callback<Response> done_;
  const Start start_;
  const AgentRetryOptions* const retry_;
  const std::string agent_;
  const std::string method_;
  const std::string job_id_;
  const absl::Time deadline_;
  RetrySchedule schedule_;  // used by one attempt's completion at a time
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // Every attempt's context and every backoff's alarm live as long as the call.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<grpc::Alarm>> alarms_ ABSL_GUARDED_BY(mu_);
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;       // the attempt in flight
  grpc::Alarm* alarm_ ABSL_GUARDED_BY(mu_) = nullptr;                 // the backoff in progress
  std::shared_ptr<RetryingCall> backoff_owner_ ABSL_GUARDED_BY(mu_);  // this call, while a backoff waits
};

// Starts `start(context, request, response, on_done)` (a stub->async() method) as one of `calls`, retried per
// `retry` (null: never), and reports the response or the final RPC error to `done`.
template <typename Request, typename Response>
std::shared_ptr<CallHandle> StartCall(CallsInFlight& calls, Request request, absl::Duration deadline,
                                      Callback<Response> done, typename RetryingCall<Request, Response>::Start start,
                                      const AgentRetryOptions* retry = nullptr, std::string agent = "",
                                      std::string method = "") {
  auto call =
      std::make_shared<RetryingCall<Request, Response>>(calls.Enter(), std::move(request), deadline, std::move(done),
                                                        std::move(start), retry, std::move(agent), std::move(method));
  std::shared_ptr<CallHandle> handle = calls.Watch(call);
  call->Attempt();
  return handle;
}

}  // namespace

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           std::shared_ptr<grpc::ChannelCredentials> credentials,
                                           const std::string& tls_server_name) {
  grpc::ChannelArguments args;
  if (!tls_server_name.empty()) args.SetSslTargetNameOverride(tls_server_name);
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // gRPC's default reconnect backoff grows to two minutes, far longer than a rolling restart: a retried
  // call would find the channel still waiting to reconnect to a service that is back.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // A `dns:///planner:50051` target behind a headless Service resolves to every pod: spread the calls over them
  // (the default pick_first would send every call over the one connection it keeps).
  args.SetLoadBalancingPolicyName("round_robin");
  return grpc::CreateCustomChannel(address, std::move(credentials), args);
}

std::shared_ptr<CallHandle> GrpcPlannerClient::Plan(v1::PlanRequest request, absl::Duration deadline,
                                                    Callback<v1::PlanResponse> done) {
  return StartCall<v1::PlanRequest, v1::PlanResponse>(
      calls_, std::move(request), deadline, std::move(done),
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->Plan(ctx, req, resp, std::move(on_done));
      },
      &retry_, "planner", "Plan");
}

std::shared_ptr<CallHandle> GrpcExecutorClient::Implement(v1::ImplementRequest request, absl::Duration deadline,
                                                          Callback<v1::ImplementResponse> done) {
  return StartCall<v1::ImplementRequest, v1::ImplementResponse>(
      calls_, std::move(request), deadline, std::move(done),
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->Implement(ctx, req, resp, std::move(on_done));
      },
      &retry_, "executor", "Implement");
}

std::shared_ptr<CallHandle> GrpcMemoryClient::QueryExperiences(v1::QueryExperiencesRequest request,
                                                               absl::Duration deadline,
                                                               Callback<v1::QueryExperiencesResponse> done) {
  return StartCall<v1::QueryExperiencesRequest, v1::QueryExperiencesResponse>(
      calls_, std::move(request), deadline, std::move(done),
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->QueryExperiences(ctx, req, resp, std::move(on_done));
      },
      &retry_, "memory", "QueryExperiences");
}

std::shared_ptr<CallHandle> GrpcMemoryClient::SummarizeIteration(v1::SummarizeIterationRequest request,
                                                                 absl::Duration deadline,
                                                                 Callback<v1::SummarizeIterationResponse> done) {
  return StartCall<v1::SummarizeIterationRequest, v1::SummarizeIterationResponse>(
      calls_, std::move(request), deadline, std::move(done),
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->SummarizeIteration(ctx, req, resp, std::move(on_done));
      },
      &retry_, "memory", "SummarizeIteration");
}

GrpcProfilerWorker::GrpcProfilerWorker(const std::string& address,
                                       std::shared_ptr<grpc::ChannelCredentials> credentials,
                                       const std::string& tls_server_name)
    : channel_(MakeChannel(address, std::move(credentials), tls_server_name)),
      stub_(v1::ProfilerService::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

std::shared_ptr<CallHandle> GrpcProfilerWorker::Profile(const v1::ProfileRequest& request, absl::Duration deadline,
                                                        Callback<v1::ProfileResult> done) {
  return StartCall<v1::ProfileRequest, v1::ProfileResponse>(
      calls_, request, deadline,
      [done = std::move(done)](absl::StatusOr<v1::ProfileResponse> response) mutable {
        if (!response.ok()) return std::move(done)(response.status());
        std::move(done)(std::move(*response->mutable_result()));
      },
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->Profile(ctx, req, resp, std::move(on_done));
      });
}

std::shared_ptr<CallHandle> GrpcProfilerWorker::GetStatus(absl::Duration deadline, Callback<v1::WorkerStatus> done) {
  return StartCall<v1::GetWorkerStatusRequest, v1::WorkerStatus>(
      calls_, v1::GetWorkerStatusRequest(), deadline, std::move(done),
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->GetWorkerStatus(ctx, req, resp, std::move(on_done));
      });
}

std::shared_ptr<CallHandle> GrpcProfilerWorker::CheckHealth(absl::Duration deadline,
                                                            absl::AnyInvocable<void(absl::Status) &&> done) {
  using grpc::health::v1::HealthCheckResponse;
  return StartCall<grpc::health::v1::HealthCheckRequest, HealthCheckResponse>(
      calls_, grpc::health::v1::HealthCheckRequest(), deadline,
      [done = std::move(done)](absl::StatusOr<HealthCheckResponse> response) mutable {
        if (!response.ok()) return std::move(done)(response.status());
        if (response->status() != HealthCheckResponse::SERVING) {
          return std::move(done)(absl::UnavailableError("the worker is not SERVING"));
        }
        std::move(done)(absl::OkStatus());
      },
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        health_->async()->Check(ctx, req, resp, std::move(on_done));
      });
}

}  // namespace accelopt::orchestrator

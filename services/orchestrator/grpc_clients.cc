#include "services/orchestrator/grpc_clients.h"

#include <grpcpp/create_channel.h>

#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "libs/core/status_convert.h"

namespace accelopt::orchestrator {
namespace {

constexpr int kMaxMessageBytes = 64 << 20;

// One unary call in flight: owns its context, request and response until the completion has run.
template <typename Request, typename Response>
class UnaryCall : public CallHandle {
 public:
  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!finished_) context.TryCancel();
  }
  void MarkFinished() {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
  }

  grpc::ClientContext context;
  Request request;
  Response response;

 private:
  std::mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// Starts `start(context, request, response, on_done)` (a stub->async() method) and reports the response or
// the RPC error to `done`.
template <typename Request, typename Response, typename Start>
std::shared_ptr<CallHandle> StartUnary(Request request, absl::Duration deadline, Callback<Response> done, Start start) {
  auto call = std::make_shared<UnaryCall<Request, Response>>();
  call->request = std::move(request);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  auto shared_done = std::make_shared<Callback<Response>>(std::move(done));
  start(&call->context, &call->request, &call->response, [call, shared_done](grpc::Status status) {
    call->MarkFinished();
    if (status.ok()) {
      std::move (*shared_done)(std::move(call->response));
    } else {
      std::move (*shared_done)(core::FromGrpcStatus(status));
    }
  });
  return call;
}

}  // namespace

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

std::shared_ptr<CallHandle> GrpcPlannerClient::Plan(v1::PlanRequest request, absl::Duration deadline,
                                                    Callback<v1::PlanResponse> done) {
  return StartUnary<v1::PlanRequest, v1::PlanResponse>(std::move(request), deadline, std::move(done),
                                                       [this](auto* ctx, auto* req, auto* resp, auto on_done) {
                                                         stub_->async()->Plan(ctx, req, resp, std::move(on_done));
                                                       });
}

std::shared_ptr<CallHandle> GrpcExecutorClient::Implement(v1::ImplementRequest request, absl::Duration deadline,
                                                          Callback<v1::ImplementResponse> done) {
  return StartUnary<v1::ImplementRequest, v1::ImplementResponse>(
      std::move(request), deadline, std::move(done), [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->Implement(ctx, req, resp, std::move(on_done));
      });
}

std::shared_ptr<CallHandle> GrpcMemoryClient::QueryExperiences(v1::QueryExperiencesRequest request,
                                                               absl::Duration deadline,
                                                               Callback<v1::QueryExperiencesResponse> done) {
  return StartUnary<v1::QueryExperiencesRequest, v1::QueryExperiencesResponse>(
      std::move(request), deadline, std::move(done), [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->QueryExperiences(ctx, req, resp, std::move(on_done));
      });
}

std::shared_ptr<CallHandle> GrpcMemoryClient::SummarizeIteration(v1::SummarizeIterationRequest request,
                                                                 absl::Duration deadline,
                                                                 Callback<v1::SummarizeIterationResponse> done) {
  return StartUnary<v1::SummarizeIterationRequest, v1::SummarizeIterationResponse>(
      std::move(request), deadline, std::move(done), [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->SummarizeIteration(ctx, req, resp, std::move(on_done));
      });
}

GrpcProfilerWorker::GrpcProfilerWorker(const std::string& address)
    : channel_(MakeChannel(address)),
      stub_(v1::ProfilerService::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

std::shared_ptr<CallHandle> GrpcProfilerWorker::Profile(const v1::ProfileRequest& request, absl::Duration deadline,
                                                        Callback<v1::ProfileResult> done) {
  return StartUnary<v1::ProfileRequest, v1::ProfileResponse>(
      request, deadline,
      [done = std::move(done)](absl::StatusOr<v1::ProfileResponse> response) mutable {
        if (!response.ok()) return std::move(done)(response.status());
        std::move(done)(std::move(*response->mutable_result()));
      },
      [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->Profile(ctx, req, resp, std::move(on_done));
      });
}

std::shared_ptr<CallHandle> GrpcProfilerWorker::GetStatus(absl::Duration deadline, Callback<v1::WorkerStatus> done) {
  return StartUnary<v1::GetWorkerStatusRequest, v1::WorkerStatus>(
      v1::GetWorkerStatusRequest(), deadline, std::move(done), [this](auto* ctx, auto* req, auto* resp, auto on_done) {
        stub_->async()->GetWorkerStatus(ctx, req, resp, std::move(on_done));
      });
}

std::shared_ptr<CallHandle> GrpcProfilerWorker::CheckHealth(absl::Duration deadline,
                                                            absl::AnyInvocable<void(absl::Status) &&> done) {
  using grpc::health::v1::HealthCheckResponse;
  return StartUnary<grpc::health::v1::HealthCheckRequest, HealthCheckResponse>(
      grpc::health::v1::HealthCheckRequest(), deadline,
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

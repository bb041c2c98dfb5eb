// gRPC implementations of the engine's client interfaces: planner, executor, memory, and one profiler
// worker. Every call is asynchronous (stub->async()) with a deadline, and cancellable through its handle.
// Planner, executor and memory calls that fail UNAVAILABLE or DEADLINE_EXCEEDED are retried per their
// AgentRetryOptions (agent_retry.h) within the call's deadline; profiler calls are not (the worker pool
// re-dispatches).
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "accelopt/v1/executor_service.grpc.pb.h"
#include "accelopt/v1/memory_service.grpc.pb.h"
#include "accelopt/v1/planner_service.grpc.pb.h"
#include "accelopt/v1/profiler_service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "services/orchestrator/agent_clients.h"
#include "services/orchestrator/agent_retry.h"
#include "services/orchestrator/calls_in_flight.h"
#include "services/orchestrator/worker_pool.h"

namespace accelopt::orchestrator {

// A channel to `address` with `credentials` (plaintext by default; rpc::MakeChannelCredentials from
// OrchestratorConfig.client_tls for mutual TLS) that accepts the large messages of the search (kernels,
// iterations' samples), up to 64 MiB, and reconnects within a second or two once a restarted service listens
// again. Calls go round-robin over every address `address` resolves to (`dns:///planner:50051` behind a
// headless Service). Over TLS the server's certificate must name `tls_server_name` when given, else the host
// of `address`.
std::shared_ptr<grpc::Channel> MakeChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials(),
    const std::string& tls_server_name = "");

class GrpcPlannerClient : public PlannerClient {
 public:
  explicit GrpcPlannerClient(std::shared_ptr<grpc::Channel> channel, AgentRetryOptions retry = {})
      : stub_(v1::PlannerService::NewStub(std::move(channel))), retry_(std::move(retry)) {}
  std::shared_ptr<CallHandle> Plan(v1::PlanRequest request, absl::Duration deadline,
                                   Callback<v1::PlanResponse> done) override;

 private:
  std::unique_ptr<v1::PlannerService::Stub> stub_;
  const AgentRetryOptions retry_;
  CallsInFlight calls_;  // last: destroyed first
};

class GrpcExecutorClient : public ExecutorClient {
 public:
  explicit GrpcExecutorClient(std::shared_ptr<grpc::Channel> channel, AgentRetryOptions retry = {})
      : stub_(v1::ExecutorService::NewStub(std::move(channel))), retry_(std::move(retry)) {}
  std::shared_ptr<CallHandle> Implement(v1::ImplementRequest request, absl::Duration deadline,
                                        Callback<v1::ImplementResponse> done) override;

 private:
  std::unique_ptr<v1::ExecutorService::Stub> stub_;
  const AgentRetryOptions retry_;
  CallsInFlight calls_;  // last: destroyed first
};

class GrpcMemoryClient : public MemoryClient {
 public:
  explicit GrpcMemoryClient(std::shared_ptr<grpc::Channel> channel, AgentRetryOptions retry = {})
      : stub_(v1::MemoryService::NewStub(std::move(channel))), retry_(std::move(retry)) {}
  std::shared_ptr<CallHandle> QueryExperiences(v1::QueryExperiencesRequest request, absl::Duration deadline,
                                               Callback<v1::QueryExperiencesResponse> done) override;
  std::shared_ptr<CallHandle> SummarizeIteration(v1::SummarizeIterationRequest request, absl::Duration deadline,
                                                 Callback<v1::SummarizeIterationResponse> done) override;

 private:
  std::unique_ptr<v1::MemoryService::Stub> stub_;
  const AgentRetryOptions retry_;
  CallsInFlight calls_;  // last: destroyed first
};

class GrpcProfilerWorker : public ProfilerWorker {
 public:
  // `tls_server_name`, when not empty, is the name the worker's certificate is checked against instead of
  // `address` (workers resolved from a DNS name are dialled by IP; their certificate names the DNS name).
  explicit GrpcProfilerWorker(
      const std::string& address,
      std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials(),
      const std::string& tls_server_name = "");
  std::shared_ptr<CallHandle> Profile(const v1::ProfileRequest& request, absl::Duration deadline,
                                      Callback<v1::ProfileResult> done) override;
  std::shared_ptr<CallHandle> GetStatus(absl::Duration deadline, Callback<v1::WorkerStatus> done) override;
  std::shared_ptr<CallHandle> CheckHealth(absl::Duration deadline,
                                          absl::AnyInvocable<void(absl::Status) &&> done) override;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ProfilerService::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  CallsInFlight calls_;  // last: destroyed first
};

}  // namespace accelopt::orchestrator

// gRPC adapter of the orchestrator service: JobService over the JobEngine. Translates requests and
// answers only; the search, durability and validation live in the engine. No handler blocks a gRPC thread:
// unary RPCs finish from the engine's callbacks, WatchJob is a write reactor fed by the engine.
//
// Authorization (when the authorizer is enabled): viewers read, submitters submit and cancel, admins act for
// every tenant. Every job records its owner tenant (JobSpec.owner); a caller of another tenant gets the same
// NOT_FOUND as for a job that does not exist. Submits and cancels are audited.
#pragma once

#include "accelopt/v1/job_service.grpc.pb.h"
#include "libs/security/call_authorizer.h"
#include "services/orchestrator/agent_providers.h"
#include "services/orchestrator/job_engine.h"

namespace accelopt::orchestrator {

class JobServiceImpl final : public v1::JobService::CallbackService {
 public:
  // None is owned; all must outlive the server (the authorizer's authenticator and audit log too). With
  // `providers`, SubmitJob first has the agent services check the job's models and rejects a job they cannot
  // serve (INVALID_ARGUMENT); without, models are checked only by the agent services when called.
  explicit JobServiceImpl(JobEngine* engine, security::CallAuthorizer authorizer = {nullptr, nullptr},
                          AgentProviders* providers = nullptr)
      : engine_(engine), authorizer_(authorizer), providers_(providers) {}

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* context, const v1::SubmitJobRequest* request,
                                      v1::SubmitJobResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context, const v1::GetJobRequest* request,
                                   v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context, const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* context, const v1::CancelJobRequest* request,
                                      v1::Job* response) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* context,
                                                   const v1::WatchJobRequest* request) override;
  grpc::ServerUnaryReactor* ListCandidates(grpc::CallbackServerContext* context,
                                           const v1::ListCandidatesRequest* request,
                                           v1::ListCandidatesResponse* response) override;
  grpc::ServerUnaryReactor* GetJobReport(grpc::CallbackServerContext* context, const v1::GetJobReportRequest* request,
                                         v1::JobReport* response) override;

 private:
  JobEngine* engine_;
  security::CallAuthorizer authorizer_;
  AgentProviders* providers_;
};

}  // namespace accelopt::orchestrator

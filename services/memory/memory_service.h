// gRPC adapter of the memory service: the summarizer agent and the optimization memory. Translates
// requests and answers; the logic lives in iteration_summarizer, experience_query and experience_transfer.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "accelopt/v1/memory_service.grpc.pb.h"
#include "libs/security/call_authorizer.h"
#include "services/memory/experience_store.h"
#include "services/memory/iteration_summarizer.h"
#include "services/memory/memory_metrics.h"
#include "services/memory/summarizer_registry.h"

namespace accelopt::memory {

// Requests are validated on the gRPC thread (INVALID_ARGUMENT naming the field); everything that touches
// RocksDB or a summarizer runs on `pool`, which calls Finish. Pointers are not owned and must outlive the
// server and `pool` (join the pool before destroying them).
//
// Authorization (when the authorizer is enabled): SummarizeIteration and QueryExperiences are internal
// (the orchestrator's identity only). List and export need role viewer and a namespace the caller's tenant
// owns (security::OwnsNamespace; every namespace at once needs admin); import needs role submitter and
// every imported experience in an owned namespace. Exports, imports and refusals are audited.
class MemoryServiceImpl final : public v1::MemoryService::CallbackService {
 public:
  MemoryServiceImpl(ExperienceStore* store, const SummarizerRegistry* summarizers, MemoryMetrics* metrics,
                    boost::asio::thread_pool* pool, security::CallAuthorizer authorizer = {nullptr, nullptr});

  grpc::ServerUnaryReactor* SummarizeIteration(grpc::CallbackServerContext* context,
                                               const v1::SummarizeIterationRequest* request,
                                               v1::SummarizeIterationResponse* response) override;
  grpc::ServerUnaryReactor* QueryExperiences(grpc::CallbackServerContext* context,
                                             const v1::QueryExperiencesRequest* request,
                                             v1::QueryExperiencesResponse* response) override;
  grpc::ServerUnaryReactor* ListExperiences(grpc::CallbackServerContext* context,
                                            const v1::ListExperiencesRequest* request,
                                            v1::ListExperiencesResponse* response) override;
  grpc::ServerUnaryReactor* ExportExperiences(grpc::CallbackServerContext* context,
                                              const v1::ExportExperiencesRequest* request,
                                              v1::ExportExperiencesResponse* response) override;
  grpc::ServerUnaryReactor* ImportExperiences(grpc::CallbackServerContext* context,
                                              const v1::ImportExperiencesRequest* request,
                                              v1::ImportExperiencesResponse* response) override;

 private:
  ExperienceStore* store_;
  const SummarizerRegistry* summarizers_;
  MemoryMetrics* metrics_;
  boost::asio::thread_pool* pool_;
  IterationSummarizer iteration_summarizer_;
  security::CallAuthorizer authorizer_;
};

}  // namespace accelopt::memory

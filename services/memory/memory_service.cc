#include "services/memory/memory_service.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/core/log.h"
#include "libs/core/status_convert.h"
#include "libs/security/namespace_policy.h"
#include "services/memory/experience_jsonl.h"
#include "services/memory/experience_query.h"
#include "services/memory/experience_transfer.h"

namespace accelopt::memory {
namespace {

// Runs `work` on `pool` and finishes `reactor` with its status; an exception becomes INTERNAL.
template <typename Work>
void Offload(boost::asio::thread_pool* pool, grpc::ServerUnaryReactor* reactor, const char* method, Work work) {
  boost::asio::post(*pool, [reactor, method, work = std::move(work)]() mutable {
    try {
      work([reactor](const absl::Status& s) { reactor->Finish(core::ToGrpcStatus(s)); });
    } catch (const std::exception& e) {
      ACCELOPT_LOG(ERROR).With("method", method) << "unexpected exception: " << e.what();
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, absl::StrCat(method, ": ", e.what())));
    }
  });
}

grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context, const absl::Status& status) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(core::ToGrpcStatus(status));
  return reactor;
}

// Reading one namespace needs its ownership or an admin's grant; reading all of them at once needs admin.
absl::Status CheckReadableNamespace(const security::Principal& principal, const std::string& ns,
                                    const google::protobuf::RepeatedPtrField<v1::NamespaceGrant>& grants) {
  if (ns.empty()) {
    if (principal.role == security::Role::kAdmin || principal.role == security::Role::kInternal) {
      return absl::OkStatus();
    }
    return absl::PermissionDeniedError("namespace: required; reading every namespace at once needs role admin");
  }
  return security::CheckNamespaceUse(principal, ns, grants);
}

// Every experience of an import must land in a namespace the principal owns.
absl::Status CheckImportNamespaces(const security::Principal& principal, absl::string_view jsonl) {
  if (principal.role == security::Role::kAdmin || principal.role == security::Role::kInternal) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<v1::Experience>> experiences = ParseExperienceJsonLines(jsonl);
  if (!experiences.ok()) return experiences.status();
  for (const v1::Experience& experience : *experiences) {
    if (absl::Status s = security::CheckNamespace(principal, experience.namespace_()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// List and export take an optional namespace: empty means every namespace.
absl::Status ValidateNamespaceFilter(absl::string_view ns) {
  return ns.empty() ? absl::OkStatus() : ValidateNamespace(ns, "namespace");
}

// Moves the experiences (if any) into `response` and finishes the call with their status.
template <typename Response, typename Finish>
void FinishWithExperiences(absl::StatusOr<std::vector<v1::Experience>> experiences, Response* response,
                           const Finish& finish) {
  if (experiences.ok()) {
    for (auto& e : *experiences) *response->add_experiences() = std::move(e);
  }
  finish(experiences.status());
}

}  // namespace

MemoryServiceImpl::MemoryServiceImpl(ExperienceStore* store, const SummarizerRegistry* summarizers,
                                     MemoryMetrics* metrics, boost::asio::thread_pool* pool,
                                     security::CallAuthorizer authorizer)
    : store_(store),
      summarizers_(summarizers),
      metrics_(metrics),
      pool_(pool),
      iteration_summarizer_(store, summarizers, metrics, pool),
      authorizer_(authorizer) {
  metrics_->experiences.Set(static_cast<double>(store_->Count()));
}

grpc::ServerUnaryReactor* MemoryServiceImpl::SummarizeIteration(grpc::CallbackServerContext* context,
                                                                const v1::SummarizeIterationRequest* request,
                                                                v1::SummarizeIterationResponse* response) {
  if (absl::Status s = authorizer_.RequireInternal(*context, "summarize"); !s.ok()) return FinishNow(context, s);
  if (absl::Status s = ValidateSummarizeRequest(*request, *summarizers_); !s.ok()) return FinishNow(context, s);
  auto* reactor = context->DefaultReactor();
  Offload(pool_, reactor, "SummarizeIteration", [this, request, response](auto finish) {
    iteration_summarizer_.Run(*request, [response, finish](absl::StatusOr<v1::SummarizeIterationResponse> r) {
      if (r.ok()) *response = std::move(*r);
      finish(r.status());
    });
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemoryServiceImpl::QueryExperiences(grpc::CallbackServerContext* context,
                                                              const v1::QueryExperiencesRequest* request,
                                                              v1::QueryExperiencesResponse* response) {
  if (absl::Status s = authorizer_.RequireInternal(*context, "query"); !s.ok()) return FinishNow(context, s);
  QueryParams params{request->namespace_(), request->capacity(), request->policy(), request->seed()};
  if (absl::Status s = ValidateQuery(params); !s.ok()) return FinishNow(context, s);
  auto* reactor = context->DefaultReactor();
  Offload(pool_, reactor, "QueryExperiences", [this, params, response](auto finish) {
    auto start = std::chrono::steady_clock::now();
    auto experiences = memory::QueryExperiences(*store_, params);
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    (params.policy == v1::MEMORY_POLICY_RANDOM ? metrics_->query_random_seconds : metrics_->query_fifo_seconds)
        .Observe(elapsed.count());
    FinishWithExperiences(std::move(experiences), response, finish);
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemoryServiceImpl::ListExperiences(grpc::CallbackServerContext* context,
                                                             const v1::ListExperiencesRequest* request,
                                                             v1::ListExperiencesResponse* response) {
  const std::string target = "memory/" + request->namespace_();
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kViewer, "list", target);
  if (!principal.ok()) return FinishNow(context, principal.status());
  // every refusal is audited, a malformed namespace too
  absl::Status s = ValidateNamespaceFilter(request->namespace_());
  if (s.ok()) s = CheckReadableNamespace(*principal, request->namespace_(), authorizer_.namespace_grants());
  if (!s.ok()) {
    authorizer_.Audit("list", &*principal, target, s);
    return FinishNow(context, s);
  }
  auto* reactor = context->DefaultReactor();
  Offload(pool_, reactor, "ListExperiences", [this, request, response](auto finish) {
    auto experiences = memory::ListExperiences(*store_, request->namespace_());
    FinishWithExperiences(std::move(experiences), response, finish);
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemoryServiceImpl::ExportExperiences(grpc::CallbackServerContext* context,
                                                               const v1::ExportExperiencesRequest* request,
                                                               v1::ExportExperiencesResponse* response) {
  const std::string target = "memory/" + request->namespace_();
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kViewer, "export", target);
  if (!principal.ok()) return FinishNow(context, principal.status());
  // every refusal is audited, a malformed namespace too
  absl::Status s = ValidateNamespaceFilter(request->namespace_());
  if (s.ok()) s = CheckReadableNamespace(*principal, request->namespace_(), authorizer_.namespace_grants());
  if (!s.ok()) {
    authorizer_.Audit("export", &*principal, target, s);
    return FinishNow(context, s);
  }
  auto* reactor = context->DefaultReactor();
  Offload(pool_, reactor, "ExportExperiences", [this, request, response, target, principal = *principal](auto finish) {
    auto exported = memory::ExportExperiences(*store_, request->namespace_());
    if (exported.ok()) {
      response->set_jsonl(std::move(exported->jsonl));
      response->set_count(exported->count);
    }
    authorizer_.Audit("export", &principal, target, exported.status(),
                      exported.ok() ? absl::StrCat(exported->count, " experiences") : "");
    finish(exported.status());
  });
  return reactor;
}

grpc::ServerUnaryReactor* MemoryServiceImpl::ImportExperiences(grpc::CallbackServerContext* context,
                                                               const v1::ImportExperiencesRequest* request,
                                                               v1::ImportExperiencesResponse* response) {
  absl::StatusOr<security::Principal> principal =
      authorizer_.Authorize(*context, security::Role::kSubmitter, "import", "memory");
  if (!principal.ok()) return FinishNow(context, principal.status());
  auto* reactor = context->DefaultReactor();
  Offload(pool_, reactor, "ImportExperiences", [this, request, response, principal = *principal](auto finish) {
    absl::Status allowed = CheckImportNamespaces(principal, request->jsonl());
    absl::StatusOr<ImportCounts> counts =
        allowed.ok() ? memory::ImportExperiences(store_, metrics_, request->jsonl()) : allowed;
    if (counts.ok()) {
      response->set_imported(counts->imported);
      response->set_skipped(counts->skipped);
    }
    authorizer_.Audit("import", &principal, "memory", counts.status(),
                      counts.ok() ? absl::StrCat(counts->imported, " imported, ", counts->skipped, " skipped") : "");
    finish(counts.status());
  });
  return reactor;
}

}  // namespace accelopt::memory

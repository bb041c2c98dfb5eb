// The LLM endpoints an agent service may call (llm.endpoints), and the resolution of a job's model spec to
// one of them. Endpoints are service configuration: a job names an endpoint and a model from its list, and a
// spec that names its own base_url or api_key_env is refused unless llm.client_endpoints allows that host
// and variable.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/common.pb.h"
#include "accelopt/v1/config.pb.h"
#include "libs/core/http_url.h"

namespace accelopt::llm {

// Where and how one request goes, after resolution. Holds no secret: the key is read per request from
// `key_env` or `key_file` (ReadApiKey).
struct ResolvedModel {
  // Endpoint name: a configured endpoint's, or "client" for a job's own (allowed) base_url.
  std::string endpoint;
  core::HttpUrl url;
  // Origin-form target: "{path}/chat/completions" plus the endpoint's query parameters, percent-encoded.
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string key_env;
  std::string key_file;
  // Header carrying the key as is (e.g. Azure's "api-key"); empty means "Authorization: Bearer <key>".
  std::string key_header;
  // Concurrency limit of the endpoint.
  int max_concurrency = 1;
  // The spec as sent: model.model is the profile's name (aliases resolved), and the profile's defaults fill
  // what the job left empty (reasoning_effort, max_tokens, timeout_seconds, extra_body).
  v1::ModelSpec spec;
  // nullopt when the model is unpriced.
  std::optional<v1::ModelPrice> price;
  // Metrics label: the configured model name, or "other" (client endpoints), so callers cannot grow label sets.
  std::string metric_model;
};

class EndpointTable {
 public:
  // `llm` must have defaults applied (config::ApplyLlmDefaults). INVALID_ARGUMENT naming the field
  // ("llm.endpoints[1].base_url: ...") for duplicate names, bad URLs, two key sources, no models, negative
  // prices, or client endpoints allowed without a host allowlist.
  static absl::StatusOr<EndpointTable> Create(const v1::LlmConfig& llm);

  // Resolves a job's model spec. INVALID_ARGUMENT naming the field: model.base_url / model.api_key_env when
  // client endpoints are off (or the host / variable is not allowed), model.endpoint when unknown or needed,
  // model.model when not in the endpoint's list, model.extra_body when it would override model or messages.
  absl::StatusOr<ResolvedModel> Resolve(const v1::ModelSpec& spec) const;

  // "vllm (gpt-oss-120b, paper), gateway (claude)" for error messages and docs; "none" when empty.
  std::string Describe() const;

 private:
  explicit EndpointTable(v1::LlmConfig llm) : llm_(std::move(llm)) {}
  absl::StatusOr<ResolvedModel> ResolveClient(const v1::ModelSpec& spec) const;

  v1::LlmConfig llm_;
};

// Reads the key of `resolved`: empty when it names no source. FAILED_PRECONDITION naming the variable or file
// (never the value) when the source is unset, unreadable or empty.
absl::StatusOr<std::string> ReadApiKey(const ResolvedModel& resolved);

}  // namespace accelopt::llm

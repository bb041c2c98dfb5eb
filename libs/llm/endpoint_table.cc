#include "libs/llm/endpoint_table.h"

#include <cstdlib>
#include <fstream>
#include <map>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "libs/config/llm_config.h"

namespace accelopt::llm {
namespace {

// Keys of the request body only the service decides: a job's extra_body cannot swap the model it was allowed,
// rewrite the prompts or switch to a streamed answer.
constexpr const char* kReservedBodyKeys[] = {"model", "messages", "stream", "n"};
// The model alias preset "paper" asks for (services/orchestrator/job_spec.cc).
constexpr char kPaperAlias[] = "paper";
// Longest key file read (a key is a line of text).
constexpr std::streamsize kMaxKeyFileBytes = 16 << 10;

absl::Status Invalid(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

std::map<std::string, std::string> Sorted(const google::protobuf::Map<std::string, std::string>& map) {
  return std::map<std::string, std::string>(map.begin(), map.end());
}

std::string PercentEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Target(const core::HttpUrl& url, const google::protobuf::Map<std::string, std::string>& query) {
  std::string target = absl::StrCat(url.path, "/chat/completions");
  const char* separator = "?";
  for (const auto& [key, value] : Sorted(query)) {  // sorted, so requests are byte-stable
    absl::StrAppend(&target, separator, PercentEncode(key), "=", PercentEncode(value));
    separator = "&";
  }
  return target;
}

// The model of `endpoint` named `model` by name or alias; nullptr when none.
const v1::LlmModelProfile* FindProfile(const v1::LlmEndpoint& endpoint, const std::string& model) {
  for (const v1::LlmModelProfile& m : endpoint.models()) {
    if (m.name() == model || absl::c_linear_search(m.aliases(), model)) return &m;
  }
  return nullptr;
}

absl::Status CheckExtraBody(const v1::ModelSpec& spec) {
  for (const char* key : kReservedBodyKeys) {
    if (spec.extra_body().fields().contains(key)) {
      return Invalid("model.extra_body", absl::StrCat("may not set '", key, "' (the service sets it)"));
    }
  }
  return absl::OkStatus();
}

// `base` with `overlay`'s fields on top (one level: a field of the job replaces the profile's whole field).
google::protobuf::Struct Overlay(const google::protobuf::Struct& base, const google::protobuf::Struct& overlay) {
  google::protobuf::Struct out = base;
  for (const auto& [key, value] : overlay.fields()) (*out.mutable_fields())[key] = value;
  return out;
}

}  // namespace

absl::StatusOr<EndpointTable> EndpointTable::Create(const v1::LlmConfig& llm) {
  if (absl::Status s = config::ValidateLlmEndpoints(llm, "llm"); !s.ok()) return s;
  return EndpointTable(llm);
}

std::string EndpointTable::Describe() const {
  std::vector<std::string> parts;
  for (const v1::LlmEndpoint& endpoint : llm_.endpoints()) {
    std::vector<std::string> models;
    for (const v1::LlmModelProfile& model : endpoint.models()) {
      models.push_back(model.name());
      for (const std::string& alias : model.aliases()) models.push_back(alias);
    }
    parts.push_back(absl::StrCat(endpoint.name(), " (", absl::StrJoin(models, ", "), ")"));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

absl::StatusOr<ResolvedModel> EndpointTable::Resolve(const v1::ModelSpec& spec) const {
  if (absl::Status s = CheckExtraBody(spec); !s.ok()) return s;
  if (!spec.base_url().empty() || !spec.api_key_env().empty()) {
    if (!spec.endpoint().empty()) {
      return Invalid(spec.base_url().empty() ? "model.api_key_env" : "model.base_url",
                     "give model.endpoint or a client endpoint, not both");
    }
    return ResolveClient(spec);
  }
  const v1::LlmEndpoint* endpoint = nullptr;
  if (!spec.endpoint().empty()) {
    for (const v1::LlmEndpoint& e : llm_.endpoints()) {
      if (e.name() == spec.endpoint()) endpoint = &e;
    }
    if (endpoint == nullptr) {
      return Invalid("model.endpoint",
                     absl::StrCat("unknown endpoint '", spec.endpoint(), "' (configured: ", Describe(), ")"));
    }
  } else if (llm_.endpoints_size() == 1) {
    endpoint = &llm_.endpoints(0);
  } else if (!spec.model().empty()) {
    // No endpoint named: the one endpoint serving the model.
    std::vector<std::string> serving;
    for (const v1::LlmEndpoint& e : llm_.endpoints()) {
      if (FindProfile(e, spec.model()) != nullptr) {
        endpoint = &e;
        serving.push_back(e.name());
      }
    }
    if (serving.size() > 1) {
      return Invalid("model.endpoint",
                     absl::StrCat("required: '", spec.model(), "' is served by ", absl::StrJoin(serving, " and ")));
    }
  }
  if (spec.model() == kPaperAlias && (endpoint == nullptr || FindProfile(*endpoint, spec.model()) == nullptr)) {
    return Invalid("model.model",
                   absl::StrCat("preset paper runs the paper's model, and no model profile of this service has the "
                                "alias 'paper' (add it to llm.endpoints[].models[].aliases; configured: ",
                                Describe(), ")"));
  }
  if (endpoint == nullptr) {
    if (llm_.endpoints().empty()) {
      return Invalid("model.endpoint",
                     "this service has no LLM endpoints configured (llm.endpoints in its config, docs/agents.md)");
    }
    if (spec.model().empty()) return Invalid("model.endpoint", absl::StrCat("required (one of: ", Describe(), ")"));
    return Invalid("model.model", absl::StrCat("'", spec.model(),
                                               "' is not configured on any endpoint (configured: ", Describe(), ")"));
  }
  const v1::LlmModelProfile* profile = FindProfile(*endpoint, spec.model());
  if (spec.model().empty() && endpoint->models_size() == 1) profile = &endpoint->models(0);
  if (profile == nullptr) {
    std::vector<std::string> known;
    for (const v1::LlmModelProfile& m : endpoint->models()) known.push_back(m.name());
    if (spec.model().empty()) {
      return Invalid("model.model", absl::StrCat("required (endpoint ", endpoint->name(), " serves ",
                                                 absl::StrJoin(known, ", "), ")"));
    }
    return Invalid("model.model", absl::StrCat("'", spec.model(), "' is not configured on endpoint ", endpoint->name(),
                                               " (configured: ", absl::StrJoin(known, ", "), ")"));
  }
  if (spec.require_price() && !profile->has_price()) {
    return Invalid("model.model", absl::StrCat("'", profile->name(), "' on endpoint ", endpoint->name(),
                                               " has no price in this service's config (llm.endpoints[].models[]."
                                               "price), so the job's budget.max_usd cannot be enforced"));
  }

  ResolvedModel out;
  out.endpoint = endpoint->name();
  out.url = *core::ParseHttpUrl(endpoint->base_url());  // checked by Create
  out.target = Target(out.url, endpoint->query_params());
  for (const auto& header : Sorted(endpoint->headers())) out.headers.push_back(header);
  out.key_env = endpoint->api_key_env();
  out.key_file = endpoint->api_key_file();
  out.key_header = endpoint->api_key_header();
  out.max_concurrency =
      endpoint->max_concurrency() > 0 ? endpoint->max_concurrency() : llm_.max_concurrency_per_endpoint();
  out.spec = spec;
  out.spec.set_model(profile->name());
  if (out.spec.reasoning_effort().empty()) out.spec.set_reasoning_effort(profile->reasoning_effort());
  if (out.spec.max_tokens() == 0) out.spec.set_max_tokens(profile->max_tokens());
  if (out.spec.timeout_seconds() == 0) out.spec.set_timeout_seconds(profile->timeout_seconds());
  if (profile->has_extra_body()) *out.spec.mutable_extra_body() = Overlay(profile->extra_body(), spec.extra_body());
  if (profile->has_price()) out.price = profile->price();
  out.metric_model = profile->name();
  return out;
}

absl::StatusOr<ResolvedModel> EndpointTable::ResolveClient(const v1::ModelSpec& spec) const {
  const v1::ClientEndpointPolicy& client = llm_.client_endpoints();
  const char* field = spec.base_url().empty() ? "model.api_key_env" : "model.base_url";
  if (!client.allow()) {
    return Invalid(field, absl::StrCat("jobs may not name their own endpoint on this service; name one of its "
                                       "endpoints in model.endpoint (configured: ",
                                       Describe(), ")"));
  }
  absl::StatusOr<core::HttpUrl> url = core::ParseHttpUrl(spec.base_url());
  if (!url.ok()) return Invalid("model.base_url", url.status().message());
  if (!absl::c_any_of(client.allowed_hosts(),
                      [&](const std::string& host) { return absl::EqualsIgnoreCase(host, url->host); })) {
    return Invalid("model.base_url",
                   absl::StrCat("host '", url->host, "' is not in this service's llm.client_endpoints.allowed_hosts"));
  }
  if (!spec.api_key_env().empty() && !absl::c_linear_search(client.allowed_key_envs(), spec.api_key_env())) {
    return Invalid(
        "model.api_key_env",
        absl::StrCat("'", spec.api_key_env(), "' is not in this service's llm.client_endpoints.allowed_key_envs"));
  }
  if (spec.model().empty()) return Invalid("model.model", "required");
  if (spec.require_price()) {
    return Invalid("model.base_url", "a job's own endpoint has no price, so its budget.max_usd cannot be enforced");
  }
  ResolvedModel out;
  out.endpoint = "client";
  out.url = *url;
  out.target = absl::StrCat(url->path, "/chat/completions");
  out.key_env = spec.api_key_env();
  out.max_concurrency = llm_.max_concurrency_per_endpoint();
  out.spec = spec;
  out.metric_model = "other";
  return out;
}

absl::StatusOr<std::string> ReadApiKey(const ResolvedModel& resolved) {
  if (!resolved.key_env.empty()) {
    const char* value = std::getenv(resolved.key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return absl::FailedPreconditionError(
          absl::StrCat("the API key variable ", resolved.key_env, " of endpoint ", resolved.endpoint, " is not set"));
    }
    return std::string(value);
  }
  if (!resolved.key_file.empty()) {
    std::ifstream in(resolved.key_file, std::ios::binary);
    std::string key(kMaxKeyFileBytes + 1, '\0');
    if (in) in.read(key.data(), kMaxKeyFileBytes + 1);
    key.resize(in.bad() ? 0 : static_cast<size_t>(in.gcount()));
    std::string trimmed(absl::StripAsciiWhitespace(key));
    if (key.size() > static_cast<size_t>(kMaxKeyFileBytes) || trimmed.empty() || !config::IsValidHeaderValue(trimmed)) {
      return absl::FailedPreconditionError(absl::StrCat("the API key file ", resolved.key_file, " of endpoint ",
                                                        resolved.endpoint, " is missing, empty or not one line"));
    }
    return trimmed;
  }
  return std::string();
}

}  // namespace accelopt::llm

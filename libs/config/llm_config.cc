#include "libs/config/llm_config.h"

#include <set>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libs/core/http_url.h"

namespace accelopt::config {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

bool ValidName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// RFC 9110 token characters, so a configured header cannot smuggle a second header or a body.
bool ValidHeaderName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

absl::Status ValidateProfile(const v1::LlmModelProfile& model, const std::string& field, std::set<std::string>& names) {
  if (model.name().empty()) return Invalid(absl::StrCat(field, ".name"), "required");
  for (const std::string& name : model.aliases()) {
    if (name.empty()) return Invalid(absl::StrCat(field, ".aliases"), "must not be empty");
  }
  std::vector<std::string> all(model.aliases().begin(), model.aliases().end());
  all.push_back(model.name());
  for (const std::string& name : all) {
    if (!names.insert(name).second) {
      return Invalid(field, absl::StrCat("'", name, "' names two models of this endpoint"));
    }
  }
  if (model.price().prompt_usd_per_mtok() < 0 || model.price().completion_usd_per_mtok() < 0) {
    return Invalid(absl::StrCat(field, ".price"), "prices must not be negative");
  }
  if (model.timeout_seconds() < 0) return Invalid(absl::StrCat(field, ".timeout_seconds"), "must not be negative");
  if (model.max_tokens() < 0) return Invalid(absl::StrCat(field, ".max_tokens"), "must not be negative");
  return absl::OkStatus();
}

absl::Status ValidateEndpoint(const v1::LlmEndpoint& endpoint, const std::string& field) {
  if (!ValidName(endpoint.name())) {
    return Invalid(absl::StrCat(field, ".name"), "must be 1-64 letters, digits, '-', '_' or '.'");
  }
  if (absl::StatusOr<core::HttpUrl> url = core::ParseHttpUrl(endpoint.base_url()); !url.ok()) {
    return Invalid(absl::StrCat(field, ".base_url"), url.status().message());
  }
  if (!endpoint.api_key_env().empty() && !endpoint.api_key_file().empty()) {
    return Invalid(field, "give api_key_env or api_key_file, not both");
  }
  if (!endpoint.api_key_header().empty() && !ValidHeaderName(endpoint.api_key_header())) {
    return Invalid(absl::StrCat(field, ".api_key_header"), "not a valid header name");
  }
  for (const auto& [name, value] : endpoint.headers()) {
    if (!ValidHeaderName(name)) return Invalid(absl::StrCat(field, ".headers"), "a header name is not a token");
    if (!IsValidHeaderValue(value)) {
      return Invalid(absl::StrCat(field, ".headers[", name, "]"), "must not contain CR, LF or NUL");
    }
  }
  if (endpoint.max_concurrency() < 0) return Invalid(absl::StrCat(field, ".max_concurrency"), "must not be negative");
  if (endpoint.models().empty()) return Invalid(absl::StrCat(field, ".models"), "list at least one model");
  std::set<std::string> names;
  for (int i = 0; i < endpoint.models_size(); ++i) {
    if (absl::Status s = ValidateProfile(endpoint.models(i), absl::StrCat(field, ".models[", i, "]"), names); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidHeaderValue(absl::string_view value) {
  for (char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

absl::Status ValidateLlmEndpoints(const v1::LlmConfig& llm, const std::string& prefix) {
  std::set<std::string> names;
  for (int i = 0; i < llm.endpoints_size(); ++i) {
    const std::string field = absl::StrCat(prefix, ".endpoints[", i, "]");
    if (absl::Status s = ValidateEndpoint(llm.endpoints(i), field); !s.ok()) return s;
    if (!names.insert(llm.endpoints(i).name()).second) {
      return Invalid(absl::StrCat(field, ".name"), absl::StrCat("'", llm.endpoints(i).name(), "' is used twice"));
    }
  }
  const v1::ClientEndpointPolicy& client = llm.client_endpoints();
  if (client.allow() && client.allowed_hosts().empty()) {
    return Invalid(absl::StrCat(prefix, ".client_endpoints.allowed_hosts"), "required when allow is true");
  }
  return absl::OkStatus();
}

void ApplyLlmDefaults(v1::LlmConfig* llm) {
  if (llm->max_concurrency_per_endpoint() == 0) llm->set_max_concurrency_per_endpoint(16);
  if (llm->max_attempts() == 0) llm->set_max_attempts(6);
  if (llm->initial_backoff_seconds() == 0) llm->set_initial_backoff_seconds(1);
  if (llm->max_backoff_seconds() == 0) llm->set_max_backoff_seconds(30);
  if (llm->default_timeout_seconds() == 0) llm->set_default_timeout_seconds(300);
  if (llm->idle_connection_seconds() == 0) llm->set_idle_connection_seconds(30);
}

absl::Status ValidateLlmConfig(const v1::LlmConfig& llm, const std::string& prefix) {
  auto field = [&](const char* name) { return absl::StrCat(prefix, ".", name); };
  if (llm.max_concurrency_per_endpoint() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(field("max_concurrency_per_endpoint"), ": must be at least 1"));
  }
  if (llm.max_attempts() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(field("max_attempts"), ": must be at least 1"));
  }
  if (llm.initial_backoff_seconds() < 0 || llm.max_backoff_seconds() < llm.initial_backoff_seconds()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field("max_backoff_seconds"), ": must be at least initial_backoff_seconds"));
  }
  if (llm.default_timeout_seconds() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(field("default_timeout_seconds"), ": must be positive"));
  }
  return ValidateLlmEndpoints(llm, prefix);
}

}  // namespace accelopt::config

#include "services/orchestrator/job_spec.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libs/core/sha256.h"
#include "libs/core/status_macros.h"

namespace accelopt::orchestrator {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("spec.", field, ": ", problem));
}

// 0 means "from the preset"; otherwise the value must be in [lo, hi].
absl::Status CheckCount(int64_t value, int64_t lo, int64_t hi, absl::string_view field) {
  if (value == 0 || (value >= lo && value <= hi)) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be from ", lo, " to ", hi, " (0 = from the preset)"));
}

absl::Status CheckNonNegative(double value, absl::string_view field) {
  if (std::isfinite(value) && value >= 0) return absl::OkStatus();
  return Invalid(field, "must be a finite number >= 0 (0 = unlimited)");
}

bool ValidNamespace(absl::string_view ns) {
  if (ns.size() > 128) return false;
  for (char c : ns) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Only what holds for every provider; whether the provider exists and what it needs (endpoint, model, ...)
// is checked by the agent services at submit (agent_providers.h).
absl::Status ValidateModel(const v1::ModelSpec& model, absl::string_view field) {
  if (model.provider().size() > 64 || !ValidNamespace(model.provider())) {
    return Invalid(absl::StrCat(field, ".provider"), "must be a provider name such as openai or builtin");
  }
  if (!std::isfinite(model.timeout_seconds()) || model.timeout_seconds() < 0) {
    return Invalid(absl::StrCat(field, ".timeout_seconds"), "must be a number >= 0");
  }
  if (model.has_temperature() && (!std::isfinite(model.temperature()) || model.temperature() < 0)) {
    return Invalid(absl::StrCat(field, ".temperature"), "must be a number >= 0");
  }
  return absl::OkStatus();
}

// Preset "paper" is the paper's setup beyond B, N, K: the low-precision ban the reference always applies
// (ResolveJobSpec), and the prompt set "paper" for every prompted (non-builtin) agent that names no set. Named
// explicitly, it also
// runs the paper's model: an agent the spec leaves unset gets provider openai and the model alias "paper",
// which the agent services resolve to the model profile carrying that alias (or refuse at submit).
void ApplyPaperModels(v1::JobSpec& spec, bool explicit_preset) {
  for (v1::ModelSpec* m : {spec.mutable_models()->mutable_planner(), spec.mutable_models()->mutable_executor(),
                           spec.mutable_models()->mutable_summarizer()}) {
    if (explicit_preset && m->provider().empty()) {
      m->set_provider("openai");
      if (m->model().empty()) m->set_model("paper");
    }
    if (!m->provider().empty() && m->provider() != kDefaultProvider && m->prompt_set().empty()) {
      m->set_prompt_set("paper");
    }
  }
}

}  // namespace

absl::StatusOr<v1::SearchParams> PresetParams(absl::string_view preset) {
  v1::SearchParams p;
  auto set = [&p](int t, int b, int n, int k, int topk, int expn) {
    p.set_iterations(t);
    p.set_beam_width(b);
    p.set_plans_per_candidate(n);
    p.set_samples_per_plan(k);
    p.set_experiences_per_iteration(topk);
    p.set_memory_capacity(expn);
  };
  if (preset == "paper") {
    set(16, 6, 12, 2, 8, 16);
  } else if (preset == "small") {
    set(4, 2, 3, 2, 4, 8);
  } else if (preset == "smoke") {
    set(1, 1, 2, 1, 2, 4);
  } else {
    return Invalid("preset", absl::StrCat("unknown preset '", preset, "' (paper, small or smoke)"));
  }
  return p;
}

absl::Status ValidateJobSpec(const v1::JobSpec& spec, const SpecLimits& limits) {
  if (spec.name().size() > 200) return Invalid("name", "must be at most 200 characters");
  if (!spec.preset().empty()) ACCELOPT_RETURN_IF_ERROR(PresetParams(spec.preset()).status());

  const v1::Problem& problem = spec.problem();
  if (problem.reference_source().empty()) return Invalid("problem.reference_source", "must not be empty");
  if (static_cast<int64_t>(problem.ByteSizeLong()) > limits.max_problem_bytes) {
    return Invalid("problem", absl::StrCat(problem.ByteSizeLong(), " bytes exceeds max_problem_bytes (",
                                           limits.max_problem_bytes, ")"));
  }
  if (problem.tolerance() < 0 || !std::isfinite(problem.tolerance())) {
    return Invalid("problem.tolerance", "must be a finite number >= 0 (0 = default 2e-5)");
  }
  const std::string& name = problem.reference_filename();
  if (!name.empty() && (name.find('/') != std::string::npos || name == "kernel.py" || name.size() < 4 ||
                        name.substr(name.size() - 3) != ".py")) {
    return Invalid("problem.reference_filename", "must be a plain *.py name other than kernel.py");
  }

  const v1::Kernel& baseline = spec.baseline();
  if (baseline.source().empty()) return Invalid("baseline.source", "must not be empty");
  if (static_cast<int64_t>(baseline.source().size()) > limits.max_kernel_bytes) {
    return Invalid("baseline.source", absl::StrCat(baseline.source().size(), " bytes exceeds max_kernel_bytes (",
                                                   limits.max_kernel_bytes, ")"));
  }
  if (!baseline.sha256().empty() && baseline.sha256() != core::Sha256Hex(baseline.source())) {
    return Invalid("baseline.sha256", "does not match the SHA-256 of baseline.source");
  }
  if (!v1::Device_IsValid(spec.device())) return Invalid("device", "unknown device");

  const v1::SearchParams& s = spec.search();
  ACCELOPT_RETURN_IF_ERROR(CheckCount(s.iterations(), 1, 1000, "search.iterations"));
  ACCELOPT_RETURN_IF_ERROR(CheckCount(s.beam_width(), 1, 64, "search.beam_width"));
  ACCELOPT_RETURN_IF_ERROR(CheckCount(s.plans_per_candidate(), 1, 64, "search.plans_per_candidate"));
  ACCELOPT_RETURN_IF_ERROR(CheckCount(s.samples_per_plan(), 1, 16, "search.samples_per_plan"));
  ACCELOPT_RETURN_IF_ERROR(CheckCount(s.experiences_per_iteration(), 1, 64, "search.experiences_per_iteration"));
  ACCELOPT_RETURN_IF_ERROR(CheckCount(s.memory_capacity(), 1, 1024, "search.memory_capacity"));
  if (!v1::MemoryPolicy_IsValid(s.memory_policy())) return Invalid("search.memory_policy", "unknown policy");
  if (!v1::BeamPolicy_IsValid(s.beam_policy())) return Invalid("search.beam_policy", "unknown policy");
  // A tenant T owns T and every T:<name> (libs/security/namespace_policy.h): one ':' may join the two.
  const std::string& memory_namespace = s.memory_namespace();
  const size_t colon = memory_namespace.find(':');
  if (!ValidNamespace(memory_namespace.substr(0, colon)) ||
      (colon != std::string::npos &&
       (colon == 0 || colon + 1 == memory_namespace.size() || !ValidNamespace(memory_namespace.substr(colon + 1))))) {
    return Invalid("search.memory_namespace",
                   "must be \"job\" or a name of letters, digits, '.', '-', '_' (a tenant's own: T or T:<name>)");
  }
  for (auto [value, field] : {std::pair{s.positive_threshold(), "search.positive_threshold"},
                              {s.negative_threshold(), "search.negative_threshold"}}) {
    if (value != 0 && (!std::isfinite(value) || value < 1.0 || value > 100.0)) {
      return Invalid(field, "must be from 1 to 100 (0 = default)");
    }
  }

  ACCELOPT_RETURN_IF_ERROR(ValidateModel(spec.models().planner(), "models.planner"));
  ACCELOPT_RETURN_IF_ERROR(ValidateModel(spec.models().executor(), "models.executor"));
  ACCELOPT_RETURN_IF_ERROR(ValidateModel(spec.models().summarizer(), "models.summarizer"));

  if (spec.profile().seeds() < 0 || spec.profile().seeds() > 32) {
    return Invalid("profile.seeds", "must be from 0 (default 5) to 32");
  }
  if (!std::isfinite(spec.profile().timeout_seconds()) || spec.profile().timeout_seconds() < 0 ||
      spec.profile().timeout_seconds() > 86400) {
    return Invalid("profile.timeout_seconds", "must be from 0 (worker default) to 86400");
  }

  ACCELOPT_RETURN_IF_ERROR(CheckNonNegative(spec.budget().max_usd(), "budget.max_usd"));
  if (spec.budget().max_tokens() < 0) return Invalid("budget.max_tokens", "must be >= 0 (0 = unlimited)");
  ACCELOPT_RETURN_IF_ERROR(CheckNonNegative(spec.budget().max_device_seconds(), "budget.max_device_seconds"));
  ACCELOPT_RETURN_IF_ERROR(CheckNonNegative(spec.budget().max_wall_seconds(), "budget.max_wall_seconds"));
  const double target = spec.stop().target_peak_percent();
  if (!std::isfinite(target) || target < 0 || target > 100) {
    return Invalid("stop.target_peak_percent", "must be from 0 (never) to 100");
  }
  return absl::OkStatus();
}

v1::AgentModels ResolveJobModels(const v1::JobSpec& spec) {
  v1::JobSpec r = spec;
  const std::string preset = r.preset().empty() ? kDefaultPreset : r.preset();
  if (preset == "paper") ApplyPaperModels(r, /*explicit_preset=*/r.preset() == "paper");
  for (v1::ModelSpec* m : {r.mutable_models()->mutable_planner(), r.mutable_models()->mutable_executor(),
                           r.mutable_models()->mutable_summarizer()}) {
    if (m->provider().empty()) m->set_provider(kDefaultProvider);
    // A budget in dollars needs every model's cost counted: unpriced models are refused at submit.
    if (r.budget().max_usd() > 0) m->set_require_price(true);
  }
  return r.models();
}

v1::JobSpec ResolveJobSpec(const v1::JobSpec& spec) {
  v1::JobSpec r = spec;
  *r.mutable_models() = ResolveJobModels(spec);
  if (r.preset().empty()) r.set_preset(kDefaultPreset);
  v1::SearchParams preset = PresetParams(r.preset()).value();
  v1::SearchParams* s = r.mutable_search();
  if (s->iterations() == 0) s->set_iterations(preset.iterations());
  if (s->beam_width() == 0) s->set_beam_width(preset.beam_width());
  if (s->plans_per_candidate() == 0) s->set_plans_per_candidate(preset.plans_per_candidate());
  if (s->samples_per_plan() == 0) s->set_samples_per_plan(preset.samples_per_plan());
  if (s->experiences_per_iteration() == 0) s->set_experiences_per_iteration(preset.experiences_per_iteration());
  if (s->memory_capacity() == 0) s->set_memory_capacity(preset.memory_capacity());
  if (s->beam_policy() == v1::BEAM_POLICY_UNSPECIFIED) s->set_beam_policy(v1::BEAM_POLICY_REFERENCE);
  if (s->memory_policy() == v1::MEMORY_POLICY_UNSPECIFIED) s->set_memory_policy(v1::MEMORY_POLICY_FIFO);
  if (s->memory_namespace().empty()) s->set_memory_namespace("job");
  if (s->positive_threshold() == 0) s->set_positive_threshold(1.04);
  if (s->negative_threshold() == 0) s->set_negative_threshold(1.15);
  if (r.device() == v1::DEVICE_UNSPECIFIED) r.set_device(v1::DEVICE_SIM_TRN1);
  if (r.profile().seeds() == 0) r.mutable_profile()->set_seeds(5);
  if (r.preset() == "paper") r.mutable_profile()->set_ban_low_precision(true);
  if (r.problem().reference_filename().empty()) r.mutable_problem()->set_reference_filename("reference.py");
  r.mutable_baseline()->set_sha256(core::Sha256Hex(r.baseline().source()));
  r.mutable_baseline()->clear_parent_sha256();
  return r;
}

std::string MemoryNamespace(const v1::JobSpec& spec, absl::string_view job_id) {
  const std::string& ns = spec.search().memory_namespace();
  return ns.empty() || ns == "job" ? std::string(job_id) : ns;
}

}  // namespace accelopt::orchestrator

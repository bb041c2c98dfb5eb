#include "services/orchestrator/job_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "libs/core/sha256.h"

namespace accelopt::orchestrator {
namespace {

v1::JobSpec ValidSpec() {
  v1::JobSpec spec;
  spec.set_name("silu");
  spec.mutable_problem()->set_name("silu");
  spec.mutable_problem()->set_reference_source("import numpy as np\n");
  spec.mutable_baseline()->set_source("import nki\n");
  return spec;
}

struct Case {
  std::string field;
  std::function<void(v1::JobSpec*)> mutate;
};

TEST(JobSpecTest, ValidSpecPasses) { EXPECT_TRUE(ValidateJobSpec(ValidSpec(), {}).ok()); }

TEST(JobSpecTest, ATenantsSubNamespaceIsAValidMemoryNamespace) {
  // security.md: tenant T owns T and every T:<name> (the orchestrator then checks the caller owns it)
  for (const char* ns : {"team-a", "team-a:kernels", "job"}) {
    v1::JobSpec spec = ValidSpec();
    spec.mutable_search()->set_memory_namespace(ns);
    EXPECT_TRUE(ValidateJobSpec(spec, {}).ok()) << ns;
  }
}

TEST(JobSpecTest, EachMalformedFieldIsNamed) {
  const std::vector<Case> cases = {
      {"spec.preset", [](v1::JobSpec* s) { s->set_preset("huge"); }},
      {"spec.problem.reference_source", [](v1::JobSpec* s) { s->mutable_problem()->clear_reference_source(); }},
      {"spec.problem.tolerance", [](v1::JobSpec* s) { s->mutable_problem()->set_tolerance(-1); }},
      {"spec.problem.reference_filename",
       [](v1::JobSpec* s) { s->mutable_problem()->set_reference_filename("../x.py"); }},
      {"spec.baseline.source", [](v1::JobSpec* s) { s->mutable_baseline()->clear_source(); }},
      {"spec.baseline.sha256", [](v1::JobSpec* s) { s->mutable_baseline()->set_sha256("00"); }},
      {"spec.device", [](v1::JobSpec* s) { s->set_device(static_cast<v1::Device>(77)); }},
      {"spec.search.iterations", [](v1::JobSpec* s) { s->mutable_search()->set_iterations(-1); }},
      {"spec.search.beam_width", [](v1::JobSpec* s) { s->mutable_search()->set_beam_width(65); }},
      {"spec.search.plans_per_candidate", [](v1::JobSpec* s) { s->mutable_search()->set_plans_per_candidate(-2); }},
      {"spec.search.samples_per_plan", [](v1::JobSpec* s) { s->mutable_search()->set_samples_per_plan(17); }},
      {"spec.search.experiences_per_iteration",
       [](v1::JobSpec* s) { s->mutable_search()->set_experiences_per_iteration(-1); }},
      {"spec.search.memory_capacity", [](v1::JobSpec* s) { s->mutable_search()->set_memory_capacity(5000); }},
      {"spec.search.memory_policy",
       [](v1::JobSpec* s) { s->mutable_search()->set_memory_policy(static_cast<v1::MemoryPolicy>(9)); }},
      {"spec.search.memory_namespace", [](v1::JobSpec* s) { s->mutable_search()->set_memory_namespace("a b"); }},
      {"spec.search.memory_namespace", [](v1::JobSpec* s) { s->mutable_search()->set_memory_namespace("a:b:c"); }},
      {"spec.search.memory_namespace", [](v1::JobSpec* s) { s->mutable_search()->set_memory_namespace(":b"); }},
      {"spec.search.positive_threshold", [](v1::JobSpec* s) { s->mutable_search()->set_positive_threshold(0.5); }},
      {"spec.search.negative_threshold", [](v1::JobSpec* s) { s->mutable_search()->set_negative_threshold(-3); }},
      {"spec.models.executor.timeout_seconds",
       [](v1::JobSpec* s) { s->mutable_models()->mutable_executor()->set_timeout_seconds(-1); }},
      {"spec.models.planner.timeout_seconds",
       [](v1::JobSpec* s) { s->mutable_models()->mutable_planner()->set_timeout_seconds(std::nan("")); }},
      {"spec.models.executor.temperature",
       [](v1::JobSpec* s) { s->mutable_models()->mutable_executor()->set_temperature(std::nan("")); }},
      {"spec.models.summarizer.temperature",
       [](v1::JobSpec* s) { s->mutable_models()->mutable_summarizer()->set_temperature(-0.5); }},
      {"spec.models.summarizer.provider",
       [](v1::JobSpec* s) { s->mutable_models()->mutable_summarizer()->set_provider("no such/provider"); }},
      {"spec.profile.seeds", [](v1::JobSpec* s) { s->mutable_profile()->set_seeds(33); }},
      {"spec.profile.timeout_seconds", [](v1::JobSpec* s) { s->mutable_profile()->set_timeout_seconds(-1); }},
      {"spec.budget.max_usd", [](v1::JobSpec* s) { s->mutable_budget()->set_max_usd(-1); }},
      {"spec.budget.max_tokens", [](v1::JobSpec* s) { s->mutable_budget()->set_max_tokens(-5); }},
      {"spec.budget.max_device_seconds", [](v1::JobSpec* s) { s->mutable_budget()->set_max_device_seconds(-1); }},
      {"spec.budget.max_wall_seconds", [](v1::JobSpec* s) { s->mutable_budget()->set_max_wall_seconds(-1); }},
      {"spec.stop.target_peak_percent", [](v1::JobSpec* s) { s->mutable_stop()->set_target_peak_percent(101); }},
      {"spec.name", [](v1::JobSpec* s) { s->set_name(std::string(201, 'x')); }},
  };
  for (const Case& c : cases) {
    v1::JobSpec spec = ValidSpec();
    c.mutate(&spec);
    absl::Status s = ValidateJobSpec(spec, {});
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.field << ": " << s;
    EXPECT_EQ(std::string(s.message()).rfind(c.field + ":", 0), 0u) << "expected " << c.field << ", got " << s;
  }
}

TEST(JobSpecTest, OversizedKernelAndProblemNameTheLimit) {
  SpecLimits limits{1000, 2000};
  v1::JobSpec spec = ValidSpec();
  spec.mutable_baseline()->set_source(std::string(1001, 'k'));
  absl::Status s = ValidateJobSpec(spec, limits);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("spec.baseline.source"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("max_kernel_bytes (1000)"), absl::string_view::npos) << s;

  spec = ValidSpec();
  spec.mutable_problem()->set_reference_source(std::string(3000, 'p'));
  s = ValidateJobSpec(spec, limits);
  EXPECT_NE(s.message().find("spec.problem"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("max_problem_bytes (2000)"), absl::string_view::npos) << s;
}

TEST(JobSpecTest, PaperPresetUsesThePaperPromptsForPromptedAgentsOnly) {
  v1::JobSpec spec = ValidSpec();
  spec.mutable_models()->mutable_planner()->set_provider("openai");
  spec.mutable_models()->mutable_executor()->set_provider("openai");
  spec.mutable_models()->mutable_executor()->set_prompt_set("mine");
  v1::JobSpec paper = ResolveJobSpec(spec);
  EXPECT_EQ(paper.models().planner().prompt_set(), "paper");
  EXPECT_EQ(paper.models().executor().prompt_set(), "mine");
  EXPECT_EQ(paper.models().summarizer().prompt_set(), "");  // builtin
  spec.set_preset("small");
  EXPECT_EQ(ResolveJobSpec(spec).models().planner().prompt_set(), "");
}

TEST(JobSpecTest, NamingPresetPaperRunsThePapersModelWhereTheSpecNamesNone) {
  v1::JobSpec spec = ValidSpec();
  spec.set_preset("paper");
  spec.mutable_models()->mutable_summarizer()->set_provider("builtin");
  v1::JobSpec paper = ResolveJobSpec(spec);
  EXPECT_EQ(paper.models().planner().provider(), "openai");
  EXPECT_EQ(paper.models().planner().model(), "paper");  // the alias agent services resolve, or refuse at submit
  EXPECT_EQ(paper.models().planner().prompt_set(), "paper");
  EXPECT_EQ(paper.models().executor().model(), "paper");
  EXPECT_EQ(paper.models().summarizer().provider(), "builtin");
  EXPECT_TRUE(paper.profile().ban_low_precision());
  // The default preset (none named) keeps the offline builtin agents.
  v1::JobSpec by_default = ResolveJobSpec(ValidSpec());
  EXPECT_EQ(by_default.preset(), "paper");
  EXPECT_EQ(by_default.models().planner().provider(), "builtin");
  EXPECT_TRUE(by_default.models().planner().model().empty());
}

TEST(JobSpecTest, ADollarBudgetRequiresPricedModels) {
  v1::JobSpec spec = ValidSpec();
  EXPECT_FALSE(ResolveJobSpec(spec).models().planner().require_price());
  spec.mutable_budget()->set_max_usd(1);
  v1::JobSpec budgeted = ResolveJobSpec(spec);
  EXPECT_TRUE(budgeted.models().planner().require_price());
  EXPECT_TRUE(budgeted.models().executor().require_price());
  EXPECT_TRUE(budgeted.models().summarizer().require_price());
}

TEST(JobSpecTest, PresetsMatchThePaperAndExplicitFieldsOverride) {
  v1::JobSpec spec = ValidSpec();
  v1::JobSpec paper = ResolveJobSpec(spec);
  EXPECT_EQ(paper.preset(), "paper");
  EXPECT_EQ(paper.search().beam_width(), 6);
  EXPECT_EQ(paper.search().plans_per_candidate(), 12);
  EXPECT_EQ(paper.search().samples_per_plan(), 2);
  EXPECT_EQ(paper.search().iterations(), 16);
  EXPECT_EQ(paper.search().experiences_per_iteration(), 8);
  EXPECT_EQ(paper.search().memory_capacity(), 16);
  EXPECT_DOUBLE_EQ(paper.search().positive_threshold(), 1.04);
  EXPECT_DOUBLE_EQ(paper.search().negative_threshold(), 1.15);
  EXPECT_EQ(paper.search().memory_policy(), v1::MEMORY_POLICY_FIFO);
  EXPECT_EQ(paper.search().memory_namespace(), "job");
  EXPECT_EQ(paper.profile().seeds(), 5);
  EXPECT_EQ(paper.device(), v1::DEVICE_SIM_TRN1);
  EXPECT_EQ(paper.baseline().sha256(), core::Sha256Hex(spec.baseline().source()));
  EXPECT_EQ(paper.search().beam_policy(), v1::BEAM_POLICY_REFERENCE);
  EXPECT_TRUE(paper.profile().ban_low_precision());

  spec.set_preset("smoke");
  spec.mutable_search()->set_plans_per_candidate(5);
  v1::JobSpec smoke = ResolveJobSpec(spec);
  EXPECT_FALSE(smoke.profile().ban_low_precision());
  EXPECT_EQ(smoke.search().beam_width(), 1);
  EXPECT_EQ(smoke.search().iterations(), 1);
  EXPECT_EQ(smoke.search().plans_per_candidate(), 5);

  spec.set_preset("small");
  v1::JobSpec small = ResolveJobSpec(spec);
  EXPECT_EQ(small.search().beam_width(), 2);
  EXPECT_EQ(small.search().iterations(), 4);
}

TEST(JobSpecTest, MemoryNamespaceIsTheJobUnlessShared) {
  v1::JobSpec spec = ResolveJobSpec(ValidSpec());
  EXPECT_EQ(MemoryNamespace(spec, "job-1"), "job-1");
  spec.mutable_search()->set_memory_namespace("team-silu");
  EXPECT_EQ(MemoryNamespace(spec, "job-1"), "team-silu");
}

}  // namespace
}  // namespace accelopt::orchestrator

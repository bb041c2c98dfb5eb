// The prompted agent models with the real default prompt set, through the client, against the LLM double.
#include "libs/llm/prompted_agents.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "libs/config/llm_config.h"
#include "libs/llm/openai_client.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::llm {
namespace {

using ::accelopt::testing::DoubleScript;
using ::accelopt::testing::LlmDouble;

template <typename T, typename Start>
Metered<T> Wait(Start start) {
  Metered<T> out;
  absl::Notification done;
  start([&](Metered<T> r) {
    out = std::move(r);
    done.Notify();
  });
  done.WaitForNotification();
  return out;
}

class PromptedAgentsTest : public ::testing::Test {
 protected:
  void Start(const std::string& content) {
    DoubleScript script;
    script.fallback.content = content;
    script.fallback.prompt_tokens = 5;
    script.fallback.completion_tokens = 6;
    auto d = LlmDouble::Start(script, {});
    ASSERT_TRUE(d.ok()) << d.status();
    double_ = *std::move(d);
    v1::LlmConfig config;
    config::ApplyLlmDefaults(&config);
    *config.add_endpoints() = double_->Endpoint({"m"});
    auto client = OpenAiClient::Create({config, {}, nullptr, 1});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    spec_.set_provider("openai");
    spec_.set_model("m");
  }

  PromptLibrary prompts_{ACCELOPT_SOURCE_DIR "/prompts"};
  std::unique_ptr<LlmDouble> double_;
  std::unique_ptr<OpenAiClient> client_;
  v1::ModelSpec spec_;
};

TEST_F(PromptedAgentsTest, PlannerFillsEveryPlaceholderAndTitlesThePlan) {
  Start("Looking at the profile...\n**Keep the weights resident in SBUF**\nDetails.");
  auto request = std::make_shared<v1::PlanRequest>();
  *request->mutable_model() = spec_;
  request->mutable_kernel()->set_source("def kernel(a):\n    return a\n");
  request->mutable_problem()->set_reference_source("def forward(a):\n    return a\n");
  request->mutable_profile()->mutable_latency()->set_mean_ms(2.5);
  request->mutable_profile()->mutable_counters()->set_hbm_read_bytes(4096);
  v1::Experience* e = request->add_experiences();
  e->set_title("Unroll");
  e->set_summary("unroll it");
  e->set_regression(true);
  e->set_speedup(1.2);
  PromptedPlanner planner(*client_, prompts_);
  ASSERT_TRUE(planner.ValidateSpec(spec_).ok());
  Metered<PlanDraft> r = Wait<PlanDraft>([&](auto done) { planner.Plan(request, 0, 77, std::move(done)); });
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.value->title, "Keep the weights resident in SBUF");
  EXPECT_EQ(r.usage.prompt_tokens(), 5);
  ASSERT_EQ(double_->request_count(), 1);
  testing::RecordedRequest seen = double_->Requests()[0];
  EXPECT_EQ(seen.system.find("{{"), std::string::npos);
  EXPECT_EQ(seen.user.find("{{"), std::string::npos);
  EXPECT_NE(seen.system.find("## Experiences"), std::string::npos);
  EXPECT_NE(seen.system.find("REGRESSION: Unroll"), std::string::npos);
  EXPECT_NE(seen.user.find("latency_ms: 2.5\nhbm_read_bytes: 4096\n"), std::string::npos) << seen.user;
  EXPECT_NE(seen.user.find("def kernel(a):"), std::string::npos);
  EXPECT_NE(seen.user.find("def forward(a):"), std::string::npos);
  EXPECT_EQ(seen.seed, static_cast<int64_t>(77 & 0x7FFFFFFF));
}

TEST_F(PromptedAgentsTest, ExecutorExtractsTheFirstCodeBlockOrSaysThereIsNone) {
  Start("Sure.\n```python\ndef kernel(a):\n    return a\n```\n");
  auto request = std::make_shared<v1::ImplementRequest>();
  *request->mutable_model() = spec_;
  request->mutable_kernel()->set_source("def kernel(a): pass");
  request->mutable_plan()->set_text("PLAN-TEXT");
  PromptedExecutor executor(*client_, prompts_);
  Metered<KernelDraft> r = Wait<KernelDraft>([&](auto done) { executor.Implement(request, 0, 1, std::move(done)); });
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.value->source, "def kernel(a):\n    return a");
  EXPECT_NE(double_->Requests()[0].user.find("PLAN-TEXT"), std::string::npos);
  EXPECT_EQ(double_->Requests()[0].user.find("{{"), std::string::npos);

  DoubleScript prose;
  prose.fallback.content = "I would rather explain it in words.";
  prose.fallback.completion_tokens = 9;
  double_->SetScript(prose);
  Metered<KernelDraft> none = Wait<KernelDraft>([&](auto done) { executor.Implement(request, 1, 2, std::move(done)); });
  EXPECT_EQ(none.value.status().message(), "no fenced code block in the response");
  EXPECT_EQ(none.usage.completion_tokens(), 9);
}

// What the double receives from the "paper" set carries the reference's substance.
TEST_F(PromptedAgentsTest, PaperPromptSetTeachesTheReferencesNkiFactsAndExamples) {
  Start("**Title**\n```python\ndef kernel(a):\n    return a\n```\n");
  spec_.set_prompt_set("paper");
  auto plan = std::make_shared<v1::PlanRequest>();
  *plan->mutable_model() = spec_;
  plan->mutable_kernel()->set_source("def kernel(a):\n    return a\n");
  PromptedPlanner planner(*client_, prompts_);
  ASSERT_TRUE(planner.ValidateSpec(spec_).ok());
  ASSERT_TRUE(Wait<PlanDraft>([&](auto done) { planner.Plan(plan, 0, 1, std::move(done)); }).value.ok());
  const std::string planner_system = double_->Requests()[0].system;
  for (const char* fact : {"par_dim", "nki.isa.nc_matmul(stationary, moving, is_stationary_onezero=False",
                           "is_moving_onezero=False, mask=None,", "is_transpose=False)", "nc_transpose",
                           "(hardware_flops - transpose_flops) / (hbm_read_bytes + hbm_write_bytes)"}) {
    EXPECT_NE(planner_system.find(fact), std::string::npos) << fact;
  }
  // The glossary names all 16 profile fields (latency and the 15 counters).
  for (const char* field : {"latency_ms", "hbm_read_bytes", "hbm_write_bytes", "psum_read_bytes", "psum_write_bytes",
                            "sbuf_read_bytes", "sbuf_write_bytes", "spill_reload_bytes", "spill_save_bytes",
                            "hardware_flops", "transpose_flops", "peak_flops_bandwidth_ratio",
                            "mm_arithmetic_intensity", "hfu_estimated_percent", "scalar_engine_active_time_percent",
                            "vector_engine_active_time_percent", "gpsimd_engine_active_time_percent"}) {
    EXPECT_NE(planner_system.find(absl::StrCat("- ", field, ":")), std::string::npos) << field;
  }

  auto implement = std::make_shared<v1::ImplementRequest>();
  *implement->mutable_model() = spec_;
  implement->mutable_plan()->set_text("PLAN");
  PromptedExecutor executor(*client_, prompts_);
  ASSERT_TRUE(executor.ValidateSpec(spec_).ok());
  ASSERT_TRUE(Wait<KernelDraft>([&](auto done) { executor.Implement(implement, 0, 1, std::move(done)); }).value.ok());
  const testing::RecordedRequest seen = double_->Requests()[1];
  for (const char* rule : {"### Output dependencies", "### Basic or advanced indexing", "### Scope", "### Shadowing"}) {
    const size_t at = seen.system.find(rule);
    ASSERT_NE(at, std::string::npos) << rule;
    // Each rule comes with a wrong and a right code example before the next rule.
    const size_t next = seen.system.find("\n### ", at + 1);
    const std::string section = seen.system.substr(at, next == std::string::npos ? std::string::npos : next - at);
    EXPECT_NE(section.find("Wrong"), std::string::npos) << rule;
    EXPECT_NE(section.find("Right"), std::string::npos) << rule;
    EXPECT_NE(section.find("```python"), std::string::npos) << rule;
  }
  EXPECT_NE(seen.user.find("kernel(*transform_to_nki_inputs(inputs))"), std::string::npos);
  EXPECT_NE(seen.user.find("Output the optimized `kernel` function"), std::string::npos);
}

TEST_F(PromptedAgentsTest, RegistryRejectsUnknownProvidersNamingTheField) {
  Start("x");
  ProviderRegistry<PlannerModel> models;
  models.Register("openai", std::make_unique<PromptedPlanner>(*client_, prompts_));
  EXPECT_TRUE(models.Find(spec_).ok());
  v1::ModelSpec spec = spec_;
  spec.set_provider("mystery");
  absl::StatusOr<PlannerModel*> unknown = models.Find(spec);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("model.provider: unknown provider 'mystery' (known: openai)"),
            std::string::npos)
      << unknown.status();
  spec.clear_provider();
  EXPECT_NE(models.Find(spec).status().message().find("model.provider: required"), std::string::npos);
}

TEST_F(PromptedAgentsTest, ValidateSpecNamesTheBadField) {
  Start("x");
  PromptedExecutor executor(*client_, prompts_);
  v1::ModelSpec spec = spec_;
  spec.set_base_url("http://attacker.example/v1");
  EXPECT_NE(executor.ValidateSpec(spec).message().find("model.base_url"), std::string::npos);
  spec = spec_;
  spec.set_endpoint("elsewhere");
  EXPECT_NE(executor.ValidateSpec(spec).message().find("model.endpoint"), std::string::npos);
  spec = spec_;
  spec.set_model("not-configured");
  EXPECT_NE(executor.ValidateSpec(spec).message().find("model.model"), std::string::npos);
  spec = spec_;
  spec.set_prompt_set("missing");
  EXPECT_NE(executor.ValidateSpec(spec).message().find("model.prompt_set"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::llm

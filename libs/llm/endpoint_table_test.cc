#include "libs/llm/endpoint_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "libs/config/llm_config.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::llm {
namespace {

v1::LlmConfig TwoEndpoints() {
  v1::LlmConfig llm;
  config::ApplyLlmDefaults(&llm);
  v1::LlmEndpoint* vllm = llm.add_endpoints();
  vllm->set_name("vllm");
  vllm->set_base_url("http://vllm.llm.svc:8000/v1");
  v1::LlmModelProfile* oss = vllm->add_models();
  oss->set_name("openai/gpt-oss-120b");
  oss->add_aliases("paper");
  oss->mutable_price()->set_prompt_usd_per_mtok(0.15);
  oss->set_timeout_seconds(600);
  v1::LlmEndpoint* gateway = llm.add_endpoints();
  gateway->set_name("gateway");
  gateway->set_base_url("https://gateway.corp/v1");
  gateway->set_api_key_env("GATEWAY_KEY");
  gateway->set_max_concurrency(4);
  gateway->add_models()->set_name("claude-sonnet");
  gateway->add_models()->set_name("qwen3-coder");
  return llm;
}

v1::ModelSpec Spec(const std::string& endpoint, const std::string& model) {
  v1::ModelSpec spec;
  spec.set_provider("openai");
  spec.set_endpoint(endpoint);
  spec.set_model(model);
  return spec;
}

absl::Status CreateError(const v1::LlmConfig& llm) { return EndpointTable::Create(llm).status(); }

void ExpectInvalid(const absl::Status& status, const std::string& field_prefix) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(status.message().rfind(field_prefix, 0), 0u) << status;
}

TEST(EndpointTableTest, ResolvesAnAliasToItsProfileWithItsDefaults) {
  auto table = EndpointTable::Create(TwoEndpoints());
  ASSERT_TRUE(table.ok()) << table.status();
  auto resolved = table->Resolve(Spec("vllm", "paper"));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->endpoint, "vllm");
  EXPECT_EQ(resolved->url.host, "vllm.llm.svc");
  EXPECT_EQ(resolved->target, "/v1/chat/completions");
  EXPECT_EQ(resolved->spec.model(), "openai/gpt-oss-120b");
  EXPECT_EQ(resolved->spec.timeout_seconds(), 600);
  EXPECT_EQ(resolved->metric_model, "openai/gpt-oss-120b");
  ASSERT_TRUE(resolved->price.has_value());
  EXPECT_EQ(resolved->price->prompt_usd_per_mtok(), 0.15);
  EXPECT_EQ(resolved->max_concurrency, 16);

  auto claude = table->Resolve(Spec("gateway", "claude-sonnet"));
  ASSERT_TRUE(claude.ok()) << claude.status();
  EXPECT_EQ(claude->key_env, "GATEWAY_KEY");
  EXPECT_EQ(claude->max_concurrency, 4);
  EXPECT_FALSE(claude->price.has_value());
}

TEST(EndpointTableTest, RefusesWhatTheConfigDoesNotName) {
  auto table = EndpointTable::Create(TwoEndpoints());
  ASSERT_TRUE(table.ok());
  ExpectInvalid(table->Resolve(Spec("", "")).status(), "model.endpoint: required (one of: vllm (");
  ExpectInvalid(table->Resolve(Spec("azure", "paper")).status(), "model.endpoint: unknown endpoint 'azure'");
  ExpectInvalid(table->Resolve(Spec("gateway", "gpt-5")).status(), "model.model: 'gpt-5' is not configured");
  ExpectInvalid(table->Resolve(Spec("gateway", "")).status(), "model.model: required");
  v1::ModelSpec smuggled = Spec("vllm", "paper");
  (*smuggled.mutable_extra_body()->mutable_fields())["model"].set_string_value("expensive-model");
  ExpectInvalid(table->Resolve(smuggled).status(), "model.extra_body: may not set 'model'");
}

TEST(EndpointTableTest, WithoutAnEndpointNameTheEndpointServingTheModelIsUsed) {
  auto table = EndpointTable::Create(TwoEndpoints());
  ASSERT_TRUE(table.ok());
  auto qwen = table->Resolve(Spec("", "qwen3-coder"));
  ASSERT_TRUE(qwen.ok()) << qwen.status();
  EXPECT_EQ(qwen->endpoint, "gateway");
  auto paper = table->Resolve(Spec("", "paper"));
  ASSERT_TRUE(paper.ok()) << paper.status();
  EXPECT_EQ(paper->endpoint, "vllm");
  ExpectInvalid(table->Resolve(Spec("", "gpt-5")).status(), "model.model: 'gpt-5' is not configured on any endpoint");
}

TEST(EndpointTableTest, PresetPaperWithoutAPaperProfileSaysWhatToConfigure) {
  v1::LlmConfig llm = TwoEndpoints();
  llm.mutable_endpoints(0)->mutable_models(0)->clear_aliases();
  auto table = EndpointTable::Create(llm);
  ASSERT_TRUE(table.ok());
  ExpectInvalid(table->Resolve(Spec("", "paper")).status(),
                "model.model: preset paper runs the paper's model, and no model profile of this service has the "
                "alias 'paper'");
  v1::LlmConfig none;
  config::ApplyLlmDefaults(&none);
  auto empty = EndpointTable::Create(none);
  ASSERT_TRUE(empty.ok());
  ExpectInvalid(empty->Resolve(Spec("", "paper")).status(), "model.model: preset paper runs the paper's model");
}

TEST(EndpointTableTest, ABudgetInDollarsRefusesUnpricedModels) {
  auto table = EndpointTable::Create(TwoEndpoints());
  ASSERT_TRUE(table.ok());
  v1::ModelSpec claude = Spec("gateway", "claude-sonnet");
  claude.set_require_price(true);
  ExpectInvalid(table->Resolve(claude).status(), "model.model: 'claude-sonnet' on endpoint gateway has no price");
  v1::ModelSpec paper = Spec("vllm", "paper");
  paper.set_require_price(true);
  EXPECT_TRUE(table->Resolve(paper).ok());
}

TEST(EndpointTableTest, OneEndpointWithOneModelNeedsNoNames) {
  v1::LlmConfig llm = TwoEndpoints();
  llm.mutable_endpoints()->RemoveLast();
  auto table = EndpointTable::Create(llm);
  ASSERT_TRUE(table.ok());
  auto resolved = table->Resolve(Spec("", ""));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->spec.model(), "openai/gpt-oss-120b");
}

TEST(EndpointTableTest, NoEndpointsConfiguredSaysWhereToConfigureThem) {
  v1::LlmConfig llm;
  config::ApplyLlmDefaults(&llm);
  auto table = EndpointTable::Create(llm);
  ASSERT_TRUE(table.ok());
  absl::Status status = table->Resolve(Spec("", "m")).status();
  ExpectInvalid(status, "model.endpoint: this service has no LLM endpoints configured");
}

TEST(EndpointTableTest, AJobCannotNameItsOwnUrlOrKeyByDefault) {
  auto table = EndpointTable::Create(TwoEndpoints());
  ASSERT_TRUE(table.ok());
  v1::ModelSpec url = Spec("", "m");
  url.set_base_url("http://attacker.example/v1");
  ExpectInvalid(table->Resolve(url).status(), "model.base_url: jobs may not name their own endpoint");
  v1::ModelSpec key = Spec("", "m");
  key.set_api_key_env("HOME");
  ExpectInvalid(table->Resolve(key).status(), "model.api_key_env: jobs may not name their own endpoint");
  v1::ModelSpec both = Spec("vllm", "paper");
  both.set_base_url("http://attacker.example/v1");
  ExpectInvalid(table->Resolve(both).status(), "model.base_url: give model.endpoint or a client endpoint");
}

TEST(EndpointTableTest, ClientEndpointsNeedAnAllowedHostAndAnAllowedKeyVariable) {
  v1::LlmConfig llm = TwoEndpoints();
  llm.mutable_client_endpoints()->set_allow(true);
  ExpectInvalid(CreateError(llm), "llm.client_endpoints.allowed_hosts: required");
  llm.mutable_client_endpoints()->add_allowed_hosts("LLM.Lab.Internal");
  llm.mutable_client_endpoints()->add_allowed_key_envs("LAB_KEY");
  auto table = EndpointTable::Create(llm);
  ASSERT_TRUE(table.ok()) << table.status();
  v1::ModelSpec spec = Spec("", "my-finetune");
  spec.set_base_url("https://llm.lab.internal/v1");
  spec.set_api_key_env("LAB_KEY");
  auto resolved = table->Resolve(spec);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->endpoint, "client");
  EXPECT_EQ(resolved->metric_model, "other");
  spec.set_api_key_env("AWS_SECRET_ACCESS_KEY");
  ExpectInvalid(table->Resolve(spec).status(), "model.api_key_env: 'AWS_SECRET_ACCESS_KEY' is not in");
  spec.set_api_key_env("LAB_KEY");
  spec.set_base_url("https://attacker.example/v1");
  ExpectInvalid(table->Resolve(spec).status(), "model.base_url: host 'attacker.example' is not in");
}

TEST(EndpointTableTest, ConfigMistakesNameTheirField) {
  v1::LlmConfig llm = TwoEndpoints();
  llm.mutable_endpoints(1)->set_name("vllm");
  ExpectInvalid(CreateError(llm), "llm.endpoints[1].name: 'vllm' is used twice");
  llm = TwoEndpoints();
  llm.mutable_endpoints(0)->set_base_url("vllm:8000");
  ExpectInvalid(CreateError(llm), "llm.endpoints[0].base_url: ");
  llm = TwoEndpoints();
  llm.mutable_endpoints(1)->set_api_key_file("/run/secrets/key");
  ExpectInvalid(CreateError(llm), "llm.endpoints[1]: give api_key_env or api_key_file, not both");
  llm = TwoEndpoints();
  llm.mutable_endpoints(1)->clear_models();
  ExpectInvalid(CreateError(llm), "llm.endpoints[1].models: list at least one model");
  llm = TwoEndpoints();
  llm.mutable_endpoints(1)->mutable_models(1)->add_aliases("claude-sonnet");
  ExpectInvalid(CreateError(llm), "llm.endpoints[1].models[1]: 'claude-sonnet' names two models");
  llm = TwoEndpoints();
  llm.mutable_endpoints(0)->mutable_models(0)->mutable_price()->set_completion_usd_per_mtok(-1);
  ExpectInvalid(CreateError(llm), "llm.endpoints[0].models[0].price: ");
  llm = TwoEndpoints();
  (*llm.mutable_endpoints(0)->mutable_headers())["x-a"] = "v\r\nInjected: 1";
  ExpectInvalid(CreateError(llm), "llm.endpoints[0].headers[x-a]: must not contain CR, LF or NUL");
}

TEST(EndpointTableTest, KeysComeFromTheirSourceAndErrorsNeverQuoteThem) {
  ResolvedModel resolved;
  resolved.endpoint = "gateway";
  EXPECT_EQ(*ReadApiKey(resolved), "");
  testing::ScratchDir scratch;
  resolved.key_file = scratch.Path("key");
  std::ofstream(resolved.key_file) << "  sk-file-key\n";
  EXPECT_EQ(*ReadApiKey(resolved), "sk-file-key");
  std::ofstream(resolved.key_file) << "sk-line-one\nsk-line-two\n";
  absl::Status two_lines = ReadApiKey(resolved).status();
  EXPECT_EQ(two_lines.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(two_lines.message()).find("sk-line"), std::string::npos) << two_lines;
  resolved.key_file += ".missing";
  EXPECT_EQ(ReadApiKey(resolved).status().code(), absl::StatusCode::kFailedPrecondition);
  resolved.key_file.clear();
  resolved.key_env = "ACCELOPT_TEST_UNSET_KEY";
  unsetenv("ACCELOPT_TEST_UNSET_KEY");
  absl::Status unset = ReadApiKey(resolved).status();
  EXPECT_EQ(unset.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(unset.message().find("ACCELOPT_TEST_UNSET_KEY"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::llm

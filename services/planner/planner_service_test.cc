// PlannerService over an in-process gRPC channel, with the real client and prompts, against the LLM double.
#include "services/planner/planner_service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <set>

#include "libs/config/llm_config.h"
#include "libs/llm/openai_client.h"
#include "libs/llm/prompted_agents.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::planner {
namespace {

using ::accelopt::testing::DoubleReply;
using ::accelopt::testing::DoubleRule;
using ::accelopt::testing::DoubleScript;
using ::accelopt::testing::LlmDouble;

class PlannerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DoubleScript script;
    script.fallback.content = "**Plan {{request_index}}**\nDo the thing.";
    script.fallback.reasoning = "because";
    script.fallback.prompt_tokens = 100;
    script.fallback.completion_tokens = 40;
    script.fallback.reasoning_tokens = 10;
    auto d = LlmDouble::Start(script, {});
    ASSERT_TRUE(d.ok()) << d.status();
    double_ = *std::move(d);
    v1::LlmConfig config;
    config.set_initial_backoff_seconds(0.001);
    config.set_max_backoff_seconds(0.01);
    config.set_max_concurrency_per_endpoint(4);
    config::ApplyLlmDefaults(&config);
    v1::LlmEndpoint* endpoint = config.add_endpoints();
    *endpoint = double_->Endpoint({"m"});
    endpoint->mutable_models(0)->mutable_price()->set_prompt_usd_per_mtok(1);
    endpoint->mutable_models(0)->mutable_price()->set_completion_usd_per_mtok(2);
    auto client = llm::OpenAiClient::Create({config, {}, registry_, 1});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    models_ = std::make_unique<llm::ProviderRegistry<llm::PlannerModel>>();
    models_->Register("openai", std::make_unique<llm::PromptedPlanner>(*client_, prompts_));
    planner_ = std::make_unique<Planner>(*models_, pool_, metrics_);
    service_ = std::make_unique<PlannerServiceImpl>(*planner_);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::PlannerService::NewStub(server_->InProcessChannel({}));
  }

  void TearDown() override {
    server_->Shutdown();
    pool_.join();
  }

  v1::PlanRequest Request(int n) const {
    v1::PlanRequest r;
    r.set_num_plans(n);
    r.set_seed(99);
    r.mutable_kernel()->set_source("def kernel(a):\n    return a\n");
    r.mutable_problem()->set_reference_source("def forward(a): return a");
    r.mutable_profile()->mutable_latency()->set_mean_ms(1.5);
    r.mutable_model()->set_provider("openai");
    r.mutable_model()->set_model("m");
    return r;
  }

  grpc::Status Plan(const v1::PlanRequest& request, v1::PlanResponse* response) {
    grpc::ClientContext context;
    return stub_->Plan(&context, request, response);
  }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  llm::PromptLibrary prompts_{ACCELOPT_SOURCE_DIR "/prompts"};
  std::unique_ptr<LlmDouble> double_;
  std::unique_ptr<llm::OpenAiClient> client_;
  std::unique_ptr<llm::ProviderRegistry<llm::PlannerModel>> models_;
  boost::asio::thread_pool pool_{2};
  PlannerMetrics metrics_ = PlannerMetrics::Create(*registry_);
  std::unique_ptr<Planner> planner_;
  std::unique_ptr<PlannerServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::PlannerService::Stub> stub_;
};

TEST_F(PlannerServiceTest, ReturnsNPlansWithSummedUsage) {
  constexpr int kPlans = 12;
  v1::PlanResponse response;
  grpc::Status status = Plan(Request(kPlans), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.samples_size(), kPlans);
  std::set<std::string> titles;
  for (const v1::PlanSample& s : response.samples()) {
    ASSERT_TRUE(s.has_plan()) << s.error();
    EXPECT_EQ(s.plan().reasoning(), "because");
    EXPECT_NE(s.plan().text().find("Do the thing."), std::string::npos);
    titles.insert(s.plan().title());
    EXPECT_EQ(s.usage().prompt_tokens(), 100);
  }
  EXPECT_EQ(titles.size(), static_cast<size_t>(kPlans));  // each sample is its own call
  EXPECT_EQ(response.usage().prompt_tokens(), 100 * kPlans);
  EXPECT_EQ(response.usage().completion_tokens(), 40 * kPlans);
  EXPECT_EQ(response.usage().reasoning_tokens(), 10 * kPlans);
  EXPECT_EQ(response.usage().requests(), kPlans);
  EXPECT_DOUBLE_EQ(response.usage().cost_usd(), kPlans * (100 * 1.0 + 40 * 2.0) / 1e6);
  std::set<int64_t> seeds;
  for (const auto& r : double_->Requests()) seeds.insert(r.seed.value_or(-1));
  EXPECT_EQ(seeds.size(), static_cast<size_t>(kPlans));
  EXPECT_LE(double_->max_in_flight(), 4);
}

TEST_F(PlannerServiceTest, ASlowSampleEndsAtTheCallsDeadlineAndTheFinishedSamplesTokensArrive) {
  DoubleScript script;
  DoubleReply fast;
  fast.content = "**fast**";
  fast.prompt_tokens = 70;
  script.rules.push_back(DoubleRule{"", 1, fast});
  script.fallback.content = "**slow**";
  script.fallback.delay = absl::Seconds(60);  // far past the caller's deadline
  double_->SetScript(script);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
  v1::PlanResponse response;
  grpc::Status status = stub_->Plan(&context, Request(2), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();  // not DEADLINE_EXCEEDED: the answer came in time
  ASSERT_EQ(response.samples_size(), 2);
  int planned = 0;
  for (const v1::PlanSample& sample : response.samples()) {
    if (sample.has_plan()) {
      ++planned;
    } else {
      EXPECT_NE(sample.error().find("answer_by"), std::string::npos) << sample.error();
    }
  }
  EXPECT_EQ(planned, 1);
  EXPECT_EQ(response.usage().prompt_tokens(), 70);
  EXPECT_EQ(response.usage().requests(), 2);
}

TEST_F(PlannerServiceTest, AFailedSampleIsReportedInItsSlotAndNeverFailsTheCall) {
  DoubleScript script;
  DoubleReply bad;
  bad.status = 400;
  script.rules.push_back(DoubleRule{"", 2, bad});
  DoubleReply empty;
  empty.fault = DoubleReply::Fault::kEmptyChoices;
  script.rules.push_back(DoubleRule{"", 1, empty});
  script.fallback.content = "**ok**";
  script.fallback.completion_tokens = 3;
  double_->SetScript(script);
  v1::PlanResponse response;
  ASSERT_TRUE(Plan(Request(6), &response).ok());
  int errors = 0;
  for (const v1::PlanSample& s : response.samples()) {
    if (s.has_plan()) {
      EXPECT_EQ(s.plan().title(), "ok");
    } else {
      ++errors;
      EXPECT_TRUE(s.error().find("HTTP 400") != std::string::npos || s.error().find("no choices") != std::string::npos)
          << s.error();
    }
  }
  EXPECT_EQ(errors, 3);
  EXPECT_EQ(response.usage().completion_tokens(), 3 * 3);
}

TEST_F(PlannerServiceTest, InvalidRequestsNameTheField) {
  auto expect_invalid = [&](v1::PlanRequest request, const std::string& field) {
    v1::PlanResponse response;
    grpc::Status status = Plan(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_EQ(status.error_message().rfind(field, 0), 0u) << status.error_message();
  };
  expect_invalid(Request(0), "num_plans");
  expect_invalid(Request(65), "num_plans");
  v1::PlanRequest r = Request(1);
  r.mutable_kernel()->clear_source();
  expect_invalid(r, "kernel.source");
  r = Request(1);
  r.mutable_kernel()->set_source(std::string(kMaxKernelBytes + 1, 'x'));
  expect_invalid(r, "kernel.source");
  r = Request(1);
  r.clear_model();
  expect_invalid(r, "model");
  r = Request(1);
  r.mutable_model()->set_provider("builtin");
  expect_invalid(r, "model.provider");
  r = Request(1);
  r.mutable_model()->set_prompt_set("nope");
  expect_invalid(r, "model.prompt_set");
  EXPECT_EQ(double_->request_count(), 0);
}

}  // namespace
}  // namespace accelopt::planner

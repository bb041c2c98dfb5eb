// ExecutorService over an in-process gRPC channel, with the real client, prompts and syntax check, against the
// LLM double.
#include "services/executor/executor_service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "libs/config/llm_config.h"
#include "libs/core/sha256.h"
#include "libs/llm/openai_client.h"
#include "libs/llm/prompted_agents.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::executor {
namespace {

using ::accelopt::testing::DoubleReply;
using ::accelopt::testing::DoubleRule;
using ::accelopt::testing::DoubleScript;
using ::accelopt::testing::LlmDouble;

constexpr char kGoodAnswer[] =
    "Here is the kernel.\n```python\n@nki.jit\ndef kernel(a):\n    return a  # {{request_index}}\n```\nDone.";

class ExecutorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = LlmDouble::Start(Answering(kGoodAnswer), {});
    ASSERT_TRUE(d.ok()) << d.status();
    double_ = *std::move(d);
    v1::LlmConfig config;
    config.set_initial_backoff_seconds(0.001);
    config.set_max_backoff_seconds(0.01);
    config::ApplyLlmDefaults(&config);
    *config.add_endpoints() = double_->Endpoint({"m"});
    auto client = llm::OpenAiClient::Create({config, {}, registry_, 1});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    models_ = std::make_unique<llm::ProviderRegistry<llm::ExecutorModel>>();
    models_->Register("openai", std::make_unique<llm::PromptedExecutor>(*client_, prompts_));
    executor_ = std::make_unique<Executor>(*models_, checker_, pool_, metrics_);
    service_ = std::make_unique<ExecutorServiceImpl>(*executor_);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::ExecutorService::NewStub(server_->InProcessChannel({}));
  }

  void TearDown() override {
    server_->Shutdown();
    pool_.join();
  }

  static DoubleScript Answering(const std::string& content) {
    DoubleScript script;
    script.fallback.content = content;
    script.fallback.prompt_tokens = 50;
    script.fallback.completion_tokens = 30;
    return script;
  }

  v1::ImplementRequest Request(int k) const {
    v1::ImplementRequest r;
    r.set_num_samples(k);
    r.mutable_kernel()->set_source("def kernel(a):\n    return a\n");
    r.mutable_kernel()->set_sha256(core::Sha256Hex(r.kernel().source()));
    r.mutable_plan()->set_text("**Do less work**");
    r.mutable_model()->set_provider("openai");
    r.mutable_model()->set_model("m");
    return r;
  }

  v1::ImplementResponse Implement(const v1::ImplementRequest& request) {
    grpc::ClientContext context;
    v1::ImplementResponse response;
    grpc::Status status = stub_->Implement(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  std::string OnlyError(const std::string& answer) {
    double_->SetScript(Answering(answer));
    v1::ImplementResponse response = Implement(Request(1));
    EXPECT_EQ(response.samples_size(), 1);
    EXPECT_FALSE(response.samples(0).has_kernel());
    EXPECT_EQ(response.samples(0).usage().completion_tokens(), 30);
    return response.samples(0).error();
  }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  llm::PromptLibrary prompts_{ACCELOPT_SOURCE_DIR "/prompts"};
  PythonSyntaxChecker checker_;
  std::unique_ptr<LlmDouble> double_;
  std::unique_ptr<llm::OpenAiClient> client_;
  std::unique_ptr<llm::ProviderRegistry<llm::ExecutorModel>> models_;
  boost::asio::thread_pool pool_{2};
  ExecutorMetrics metrics_ = ExecutorMetrics::Create(*registry_);
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<ExecutorServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ExecutorService::Stub> stub_;
};

TEST_F(ExecutorServiceTest, ReturnsKCheckedKernelsWithHashesAndSummedUsage) {
  constexpr int kSamples = 4;
  v1::ImplementRequest request = Request(kSamples);
  v1::ImplementResponse response = Implement(request);
  ASSERT_EQ(response.samples_size(), kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const v1::KernelSample& s = response.samples(i);
    ASSERT_TRUE(s.has_kernel()) << s.error();
    const std::string& source = s.kernel().source();
    EXPECT_EQ(source.rfind("import numpy as np\nimport neuronxcc.nki as nki\n", 0), 0u) << source;
    EXPECT_NE(source.find("@nki.jit\ndef kernel(a):"), std::string::npos);
    EXPECT_EQ(source.find("Done."), std::string::npos);
    EXPECT_EQ(s.kernel().sha256(), core::Sha256Hex(source));
    EXPECT_EQ(s.kernel().parent_sha256(), request.kernel().sha256());
  }
  EXPECT_EQ(response.usage().prompt_tokens(), 50 * kSamples);
  EXPECT_EQ(response.usage().completion_tokens(), 30 * kSamples);
  EXPECT_EQ(response.usage().requests(), kSamples);
  EXPECT_NE(double_->Requests()[0].user.find("**Do less work**"), std::string::npos);
}

TEST_F(ExecutorServiceTest, ExplainsEachUnusableAnswerPrecisely) {
  EXPECT_EQ(OnlyError("I cannot write code today."), "no fenced code block in the response");
  EXPECT_EQ(OnlyError("```python\ndef helper(a):\n    return a\n```"), "code block has no `kernel` function");
  std::string error = OnlyError("```python\ndef kernel(a):\n    return (a\n```");
  EXPECT_EQ(error.rfind("does not parse: line 2: ", 0), 0u) << error;
}

TEST_F(ExecutorServiceTest, AcceptsOptimizedKernelAndKeepsExistingImports) {
  double_->SetScript(Answering("```python\nimport numpy as np\ndef optimized_kernel(a):\n    return a\n```"));
  v1::ImplementResponse response = Implement(Request(1));
  ASSERT_TRUE(response.samples(0).has_kernel()) << response.samples(0).error();
  const std::string& source = response.samples(0).kernel().source();
  EXPECT_EQ(source.find("import numpy as np"), source.rfind("import numpy as np"));
}

TEST_F(ExecutorServiceTest, MisbehavingEndpointGivesPerSampleErrorsNotAFailedCall) {
  DoubleScript script = Answering(kGoodAnswer);
  DoubleReply truncated;
  truncated.fault = DoubleReply::Fault::kTruncatedJson;
  DoubleReply unavailable;
  unavailable.status = 503;
  script.rules.push_back(DoubleRule{"", 1, truncated});
  script.rules.push_back(DoubleRule{"", 1, unavailable});  // retried, then answered
  double_->SetScript(script);
  v1::ImplementResponse response = Implement(Request(3));
  int kernels = 0;
  for (const auto& s : response.samples()) {
    if (s.has_kernel()) {
      ++kernels;
    } else {
      EXPECT_NE(s.error().find("not valid JSON"), std::string::npos) << s.error();
    }
  }
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(response.usage().requests(), 4);
  EXPECT_EQ(response.usage().retries(), 1);
}

TEST_F(ExecutorServiceTest, InvalidRequestsNameTheField) {
  auto code_and_message = [&](const v1::ImplementRequest& request) {
    grpc::ClientContext context;
    v1::ImplementResponse response;
    grpc::Status status = stub_->Implement(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  EXPECT_EQ(code_and_message(Request(0)).rfind("num_samples", 0), 0u);
  v1::ImplementRequest r = Request(1);
  r.mutable_plan()->clear_text();
  EXPECT_EQ(code_and_message(r).rfind("plan.text", 0), 0u);
  r = Request(1);
  r.mutable_model()->set_provider("other");
  EXPECT_EQ(code_and_message(r).rfind("model.provider", 0), 0u);
  EXPECT_EQ(double_->request_count(), 0);
}

}  // namespace
}  // namespace accelopt::executor

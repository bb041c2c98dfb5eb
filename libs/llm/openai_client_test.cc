// The "openai" client against the LLM double over real HTTP(S) on loopback.
#include "libs/llm/openai_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/synchronization/notification.h"
#include "libs/config/llm_config.h"
#include "libs/testing/scratch_dir.h"
#include "tests/llm_double/connect_proxy.h"
#include "tests/llm_double/llm_double.h"
#include "tests/llm_double/test_tls.h"

namespace accelopt::llm {
namespace {

using ::accelopt::testing::ConnectProxy;
using ::accelopt::testing::DoubleReply;
using ::accelopt::testing::DoubleRule;
using ::accelopt::testing::DoubleScript;
using ::accelopt::testing::LlmDouble;
using ::accelopt::testing::MakeSelfSignedIdentity;
using ::accelopt::testing::TlsIdentity;

DoubleReply Ok(const std::string& content, int64_t prompt = 10, int64_t completion = 20, int64_t reasoning = 0) {
  DoubleReply r;
  r.content = content;
  r.prompt_tokens = prompt;
  r.completion_tokens = completion;
  r.reasoning_tokens = reasoning;
  return r;
}

DoubleReply Status(int status, std::string retry_after = "") {
  DoubleReply r;
  r.status = status;
  r.retry_after = std::move(retry_after);
  return r;
}

DoubleReply Fault(DoubleReply::Fault fault) {
  DoubleReply r = Ok("unused");
  r.fault = fault;
  return r;
}

DoubleScript Script(std::vector<DoubleReply> first, DoubleReply fallback) {
  DoubleScript s;
  for (DoubleReply& r : first) s.rules.push_back(DoubleRule{"", 1, std::move(r)});
  s.fallback = std::move(fallback);
  return s;
}

// Sum of a counter family's values over series whose labels include `labels`.
double CounterSum(prometheus::Registry& registry, const std::string& name,
                  const std::map<std::string, std::string>& labels = {}) {
  double sum = 0;
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        bool found = false;
        for (const auto& l : metric.label) found |= (l.name == k && l.value == v);
        match &= found;
      }
      if (match) sum += metric.counter.value;
    }
  }
  return sum;
}

class OpenAiClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.set_initial_backoff_seconds(0.001);
    config_.set_max_backoff_seconds(0.01);
    config::ApplyLlmDefaults(&config_);
    v1::LlmEndpoint* endpoint = config_.add_endpoints();
    endpoint->set_name("test");
    endpoint->add_models()->set_name("test-model");
  }

  // The configured endpoint's URL (the job names the endpoint, never the URL).
  void SetBaseUrl(const std::string& url) { config_.mutable_endpoints(0)->set_base_url(url); }
  v1::ModelPrice* Price() { return config_.mutable_endpoints(0)->mutable_models(0)->mutable_price(); }

  void StartDouble(DoubleScript script, std::optional<TlsIdentity> tls = std::nullopt) {
    LlmDouble::Options options;
    options.tls = std::move(tls);
    options.idle_close = double_idle_close_;
    auto d = LlmDouble::Start(std::move(script), options);
    ASSERT_TRUE(d.ok()) << d.status();
    double_ = *std::move(d);
    spec_.set_provider("openai");
    spec_.set_endpoint("test");
    spec_.set_model("test-model");
    SetBaseUrl(double_->base_url());
  }

  std::unique_ptr<OpenAiClient> Client(ProxyConfig proxy = {}) {
    OpenAiClient::Options options;
    options.config = config_;
    options.proxy = std::move(proxy);
    options.registry = registry_;
    auto client = OpenAiClient::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  static Metered<Completion> Call(OpenAiClient& client, CompletionRequest request) {
    Metered<Completion> out;
    absl::Notification done;
    client.Complete(std::move(request), [&](Metered<Completion> r) {
      out = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return out;
  }

  CompletionRequest Request(const std::string& user = "hello") const {
    return CompletionRequest{"planner", spec_, "system text", user, 1234};
  }

  v1::LlmConfig config_;
  v1::ModelSpec spec_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  absl::Duration double_idle_close_ = absl::ZeroDuration();
  std::unique_ptr<LlmDouble> double_;
};

TEST_F(OpenAiClientTest, ReturnsContentReasoningUsageAndCost) {
  DoubleReply reply = Ok("the plan", 100, 50, 20);
  reply.reasoning = "thinking";
  StartDouble(Script({}, reply));
  Price()->set_prompt_usd_per_mtok(1.0);
  Price()->set_completion_usd_per_mtok(4.0);
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.value->text, "the plan");
  EXPECT_EQ(r.value->reasoning, "thinking");
  EXPECT_EQ(r.usage.prompt_tokens(), 100);
  EXPECT_EQ(r.usage.completion_tokens(), 50);
  EXPECT_EQ(r.usage.reasoning_tokens(), 20);
  EXPECT_DOUBLE_EQ(r.usage.cost_usd(), (100 * 1.0 + 50 * 4.0) / 1e6);
  EXPECT_EQ(r.usage.requests(), 1);
  EXPECT_EQ(r.usage.retries(), 0);

  std::vector<testing::RecordedRequest> seen = double_->Requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/v1/chat/completions");
  EXPECT_EQ(seen[0].system, "system text");
  EXPECT_EQ(seen[0].user, "hello");
  EXPECT_EQ(seen[0].model, "test-model");
  EXPECT_EQ(seen[0].seed, 1234);
  EXPECT_EQ(seen[0].headers.count("authorization"), 0u);  // no api_key_env, no header
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_requests_total", {{"agent", "planner"}, {"outcome", "ok"}}), 1);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_tokens_total", {{"kind", "completion"}}), 50);
  EXPECT_DOUBLE_EQ(CounterSum(*registry_, "accelopt_llm_cost_usd_total"), r.usage.cost_usd());
}

TEST_F(OpenAiClientTest, HonoursRetryAfterSecondsThenRecovers) {
  StartDouble(Script({Status(429, "1")}, Ok("fine")));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.usage.requests(), 2);
  EXPECT_EQ(r.usage.retries(), 1);
  std::vector<testing::RecordedRequest> seen = double_->Requests();
  ASSERT_EQ(seen.size(), 2u);
  // The backoff alone is at most 10 ms here; only Retry-After explains a gap of a second.
  EXPECT_GE(seen[1].received - seen[0].received, absl::Seconds(1));
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_retries_total"), 1);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_requests_total", {{"outcome", "rate_limited"}}), 1);
}

TEST_F(OpenAiClientTest, Retries5xxAndDroppedConnectionsThenRecovers) {
  StartDouble(Script({Status(500), Status(503), Fault(DoubleReply::Fault::kCloseConnection)}, Ok("fine")));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.usage.requests(), 4);
  EXPECT_EQ(r.usage.retries(), 3);
}

TEST_F(OpenAiClientTest, SequentialCallsShareOneKeptAliveConnection) {
  StartDouble(Script({Status(503)}, Ok("fine")));  // an error answer keeps the connection too
  auto client = Client();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Call(*client, Request()).value.ok());
  EXPECT_EQ(double_->request_count(), 5);
  EXPECT_EQ(double_->connections_accepted(), 1);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_http_exchanges_total", {{"reused", "false"}}), 1);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_http_exchanges_total", {{"reused", "true"}}), 4);
  for (const testing::RecordedRequest& seen : double_->Requests()) EXPECT_EQ(seen.headers.count("connection"), 0u);
}

TEST_F(OpenAiClientTest, ConcurrentCallsOpenOneConnectionEachAndReuseThem) {
  StartDouble(Script({}, Ok("fine")));
  config_.set_max_concurrency_per_endpoint(4);
  auto client = Client();
  for (int round = 0; round < 3; ++round) {
    absl::Mutex mu;
    int remaining = 4;
    for (int i = 0; i < 4; ++i) {
      client->Complete(Request(), [&](Metered<Completion> r) {
        EXPECT_TRUE(r.value.ok()) << r.value.status();
        absl::MutexLock lock(&mu);
        --remaining;
      });
    }
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &remaining));
  }
  EXPECT_EQ(double_->request_count(), 12);
  EXPECT_LE(double_->connections_accepted(), 4);  // never more than the permits in flight
}

TEST_F(OpenAiClientTest, AConnectionTheServerClosedWhileIdleIsNotUsed) {
  double_idle_close_ = absl::Milliseconds(20);
  StartDouble(Script({}, Ok("fine")));
  auto client = Client();
  ASSERT_TRUE(Call(*client, Request()).value.ok());
  ASSERT_TRUE(double_->WaitForOpenConnectionsAtMost(0, absl::Seconds(10)));  // the server's keep-alive timeout
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.usage.requests(), 1);  // no failed attempt on the dead connection
  EXPECT_EQ(r.usage.retries(), 0);
  EXPECT_EQ(double_->connections_accepted(), 2);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_http_exchanges_total", {{"reused", "true"}}), 0);
}

TEST_F(OpenAiClientTest, ReuseOffOpensAConnectionPerRequestAndAsksToClose) {
  config_.set_idle_connection_seconds(-1);
  StartDouble(Script({}, Ok("fine")));
  auto client = Client();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Call(*client, Request()).value.ok());
  EXPECT_EQ(double_->connections_accepted(), 3);
  EXPECT_EQ(double_->Requests()[0].headers.at("connection"), "close");
}

TEST_F(OpenAiClientTest, GivesUpAfterMaxAttemptsWithTheLastError) {
  config_.set_max_attempts(3);
  StartDouble(Script({}, Status(502)));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_FALSE(r.value.ok());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(r.value.status().message().find("after 3 attempts: HTTP 502"), std::string::npos) << r.value.status();
  EXPECT_EQ(double_->request_count(), 3);
  EXPECT_EQ(r.usage.requests(), 3);
}

TEST_F(OpenAiClientTest, TimesOutOnAHungServerAndRetries) {
  config_.set_max_attempts(2);
  StartDouble(Script({}, Fault(DoubleReply::Fault::kHang)));
  spec_.set_timeout_seconds(0.2);
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kDeadlineExceeded) << r.value.status();
  EXPECT_EQ(r.usage.requests(), 2);
  EXPECT_TRUE(double_->WaitForRequests(2, absl::Seconds(5)));
}

TEST_F(OpenAiClientTest, DoesNotRetryOtherClientErrors) {
  StartDouble(Script({}, Status(400)));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kInvalidArgument) << r.value.status();
  EXPECT_NE(r.value.status().message().find("HTTP 400 from http://127.0.0.1:"), std::string::npos);
  EXPECT_EQ(double_->request_count(), 1);
}

TEST_F(OpenAiClientTest, UnusableAnswersAreNotRetriedAndSayWhy) {
  StartDouble(Script({Fault(DoubleReply::Fault::kTruncatedJson), Fault(DoubleReply::Fault::kEmptyChoices),
                      Fault(DoubleReply::Fault::kNoContent)},
                     Ok("fine")));
  auto client = Client();
  Metered<Completion> truncated = Call(*client, Request());
  Metered<Completion> empty = Call(*client, Request());
  Metered<Completion> no_content = Call(*client, Request());
  EXPECT_EQ(truncated.value.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(truncated.value.status().message().find("not valid JSON"), std::string::npos);
  EXPECT_NE(empty.value.status().message().find("no choices"), std::string::npos) << empty.value.status();
  EXPECT_EQ(empty.usage.prompt_tokens(), 10);  // tokens of an unusable answer are still counted
  EXPECT_NE(no_content.value.status().message().find("no content"), std::string::npos);
  EXPECT_EQ(double_->request_count(), 3);
}

TEST_F(OpenAiClientTest, ApiKeyIsSentAsBearerAndNeverAppearsInErrorsOrLogs) {
  const std::string key = "sk-test-very-secret-0123456789";
  ASSERT_EQ(setenv("ACCELOPT_TEST_LLM_KEY", key.c_str(), 1), 0);
  DoubleReply unauthorized = Status(401);
  unauthorized.body = R"({"error":{"message":"bad key sk-test-very-secret-0123456789"}})";
  StartDouble(Script({unauthorized}, Ok("fine")));
  config_.mutable_endpoints(0)->set_api_key_env("ACCELOPT_TEST_LLM_KEY");
  auto client = Client();
  ::testing::internal::CaptureStderr();
  Metered<Completion> denied = Call(*client, Request());
  Metered<Completion> ok = Call(*client, Request());
  std::string logs = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(denied.value.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(denied.value.status().message().find(key), std::string::npos) << denied.value.status();
  EXPECT_NE(denied.value.status().message().find("[redacted]"), std::string::npos);
  EXPECT_EQ(logs.find(key), std::string::npos);
  ASSERT_TRUE(ok.value.ok());
  for (const auto& request : double_->Requests()) {
    EXPECT_EQ(request.headers.at("authorization"), "Bearer " + key);
  }
}

TEST_F(OpenAiClientTest, MissingKeyVariableIsAPreconditionNamingTheVariable) {
  StartDouble(Script({}, Ok("fine")));
  config_.mutable_endpoints(0)->set_api_key_env("ACCELOPT_TEST_UNSET_VARIABLE");
  unsetenv("ACCELOPT_TEST_UNSET_VARIABLE");
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.value.status().message().find("ACCELOPT_TEST_UNSET_VARIABLE"), std::string::npos);
  EXPECT_EQ(double_->request_count(), 0);
}

TEST_F(OpenAiClientTest, BadEndpointUrlFailsAtStartNamingTheField) {
  SetBaseUrl("localhost:8000/v1");
  OpenAiClient::Options options;
  options.config = config_;
  auto client = OpenAiClient::Create(std::move(options));
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("llm.endpoints[0].base_url"), std::string::npos) << client.status();
}

TEST_F(OpenAiClientTest, ConcurrencyPerEndpointIsLimitedAndTotalsAddUp) {
  config_.set_max_concurrency_per_endpoint(3);
  Price()->set_prompt_usd_per_mtok(2.0);
  DoubleReply slow = Ok("fine", 7, 11, 3);
  slow.delay = absl::Milliseconds(30);
  StartDouble(Script({}, slow));
  auto client = Client();
  constexpr int kCalls = 12;
  std::vector<Metered<Completion>> results(kCalls);
  absl::Mutex mu;
  int remaining = kCalls;
  for (int i = 0; i < kCalls; ++i) {
    client->Complete(Request("call " + std::to_string(i)), [&, i](Metered<Completion> r) {
      absl::MutexLock lock(&mu);
      results[i] = std::move(r);
      --remaining;
    });
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &remaining));
  }
  v1::TokenUsage total;
  for (const auto& r : results) {
    EXPECT_TRUE(r.value.ok()) << r.value.status();
    AddUsage(r.usage, &total);
  }
  EXPECT_LE(double_->max_in_flight(), 3);
  EXPECT_GE(double_->max_in_flight(), 1);
  EXPECT_EQ(total.prompt_tokens(), 7 * kCalls);
  EXPECT_EQ(total.completion_tokens(), 11 * kCalls);
  EXPECT_EQ(total.reasoning_tokens(), 3 * kCalls);
  EXPECT_DOUBLE_EQ(total.cost_usd(), 7 * kCalls * 2.0 / 1e6);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_tokens_total", {{"kind", "prompt"}}), 7 * kCalls);
}

TEST_F(OpenAiClientTest, UnpricedModelCostsNothingAndIsCounted) {
  StartDouble(Script({}, Ok("fine", 1000, 1000)));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok());
  EXPECT_EQ(r.usage.cost_usd(), 0);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_unpriced_responses_total", {{"model", "test-model"}}), 1);
}

TEST_F(OpenAiClientTest, SendsTheEndpointsHeadersQueryAndKeyFileAndTheProfilesDefaults) {
  StartDouble(Script({}, Ok("fine")));
  testing::ScratchDir scratch;
  const std::string key_file = scratch.Path("key");
  std::ofstream(key_file) << "azure-key-42\n";
  v1::LlmEndpoint* endpoint = config_.mutable_endpoints(0);
  endpoint->set_api_key_file(key_file);
  endpoint->set_api_key_header("api-key");
  (*endpoint->mutable_headers())["x-team"] = "kernels";
  (*endpoint->mutable_query_params())["api-version"] = "2024-10-21";
  (*endpoint->mutable_query_params())["a b"] = "c&d";
  v1::LlmModelProfile* profile = endpoint->mutable_models(0);
  profile->add_aliases("paper");
  profile->set_reasoning_effort("high");
  profile->set_max_tokens(4096);
  (*profile->mutable_extra_body()->mutable_fields())["chat_template_kwargs"].set_string_value("profile");
  (*profile->mutable_extra_body()->mutable_fields())["top_p"].set_number_value(0.9);
  spec_.set_model("paper");  // the alias
  (*spec_.mutable_extra_body()->mutable_fields())["top_p"].set_number_value(0.5);
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  std::vector<testing::RecordedRequest> seen = double_->Requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/v1/chat/completions?a%20b=c%26d&api-version=2024-10-21");
  EXPECT_EQ(seen[0].headers.at("api-key"), "azure-key-42");
  EXPECT_EQ(seen[0].headers.count("authorization"), 0u);
  EXPECT_EQ(seen[0].headers.at("x-team"), "kernels");
  EXPECT_EQ(seen[0].model, "test-model");  // the alias resolved to the profile's name
  EXPECT_NE(seen[0].body.find("\"reasoning_effort\":\"high\""), std::string::npos) << seen[0].body;
  EXPECT_NE(seen[0].body.find("\"max_tokens\":4096"), std::string::npos) << seen[0].body;
  EXPECT_NE(seen[0].body.find("\"chat_template_kwargs\":\"profile\""), std::string::npos) << seen[0].body;
  EXPECT_NE(seen[0].body.find("\"top_p\":0.5"), std::string::npos) << seen[0].body;  // the job's value wins
}

TEST_F(OpenAiClientTest, AJobsOwnEndpointIsRefusedAndReceivesNothing) {
  StartDouble(Script({}, Ok("fine")));
  ASSERT_EQ(setenv("ACCELOPT_TEST_LLM_KEY", "sk-must-not-leave", 1), 0);
  auto client = Client();
  spec_.clear_endpoint();
  spec_.set_base_url(double_->base_url());
  spec_.set_api_key_env("ACCELOPT_TEST_LLM_KEY");
  EXPECT_EQ(client->ValidateSpec(spec_).code(), absl::StatusCode::kInvalidArgument);
  Metered<Completion> r = Call(*client, Request());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.value.status().message().rfind("model.base_url: ", 0), 0u) << r.value.status();
  EXPECT_EQ(double_->request_count(), 0);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_requests_total", {{"model", "other"}, {"outcome", "config_error"}}),
            1);
}

TEST_F(OpenAiClientTest, AllowedClientEndpointsAreLabelledOtherAndSendOnlyAllowedKeys) {
  StartDouble(Script({}, Ok("fine")));
  ASSERT_EQ(setenv("ACCELOPT_TEST_LLM_KEY", "sk-allowed", 1), 0);
  config_.mutable_client_endpoints()->set_allow(true);
  config_.mutable_client_endpoints()->add_allowed_hosts("127.0.0.1");
  auto client = Client();
  spec_.clear_endpoint();
  spec_.set_base_url(double_->base_url());
  spec_.set_model("anything-goes");
  spec_.set_api_key_env("HOME");
  absl::Status key_refused = client->ValidateSpec(spec_);
  EXPECT_EQ(key_refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(key_refused.message().rfind("model.api_key_env: ", 0), 0u) << key_refused;
  spec_.clear_api_key_env();
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(double_->Requests()[0].headers.count("authorization"), 0u);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_requests_total", {{"model", "other"}, {"outcome", "ok"}}), 1);
  EXPECT_EQ(CounterSum(*registry_, "accelopt_llm_requests_total", {{"model", "anything-goes"}}), 0);
}

TEST_F(OpenAiClientTest, NoAttemptOrRetryGoesPastTheAgentsDeadline) {
  DoubleReply slow = Ok("late");
  slow.delay = absl::Seconds(60);
  StartDouble(Script({}, slow));
  auto client = Client();  // 6 attempts of 300 s each by default
  CompletionRequest request = Request();
  request.deadline = absl::Now() + absl::Milliseconds(400);
  Metered<Completion> r = Call(*client, request);
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kDeadlineExceeded) << r.value.status();
  EXPECT_NE(r.value.status().message().find("answer_by"), std::string::npos) << r.value.status();
  EXPECT_EQ(r.usage.requests(), 1);  // the first attempt was cut at the deadline; no retry was started
  EXPECT_EQ(double_->request_count(), 1);
}

class OpenAiClientTlsTest : public OpenAiClientTest {
 protected:
  void SetUp() override {
    OpenAiClientTest::SetUp();
    auto identity = MakeSelfSignedIdentity({"localhost", "llm.double.test"}, {"127.0.0.1"});
    ASSERT_TRUE(identity.ok()) << identity.status();
    identity_ = *identity;
    ca_file_ = scratch_.Path("ca.pem");
    std::ofstream(ca_file_) << identity_.cert_pem;
    StartDouble(Script({}, Ok("secure")), identity_);
  }
  std::string Url(const std::string& host) const {
    return "https://" + host + ":" + std::to_string(double_->port()) + "/v1";
  }
  TlsIdentity identity_;
  testing::ScratchDir scratch_;
  std::string ca_file_;
};

TEST_F(OpenAiClientTlsTest, RejectsAnUntrustedCertificateWithoutRetrying) {
  SetBaseUrl(Url("localhost"));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kFailedPrecondition) << r.value.status();
  EXPECT_NE(r.value.status().message().find("does not verify"), std::string::npos) << r.value.status();
  EXPECT_EQ(r.usage.requests(), 1);
  EXPECT_EQ(double_->request_count(), 0);
}

TEST_F(OpenAiClientTlsTest, TrustsTheCaFileByHostNameAndByIp) {
  config_.set_ca_file(ca_file_);
  for (const char* host : {"localhost", "127.0.0.1"}) {
    SetBaseUrl(Url(host));
    auto client = Client();
    Metered<Completion> r = Call(*client, Request());
    ASSERT_TRUE(r.value.ok()) << host << ": " << r.value.status();
    EXPECT_EQ(r.value->text, "secure");
  }
}

TEST_F(OpenAiClientTlsTest, SequentialCallsShareOneTlsSession) {
  config_.set_ca_file(ca_file_);
  SetBaseUrl(Url("localhost"));
  auto client = Client();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Call(*client, Request()).value.ok());
  EXPECT_EQ(double_->connections_accepted(), 1);
}

TEST_F(OpenAiClientTlsTest, NameMismatchFailsVerification) {
  auto other = MakeSelfSignedIdentity({"someone-else.test"}, {});
  ASSERT_TRUE(other.ok());
  StartDouble(Script({}, Ok("secure")), *other);
  std::ofstream(ca_file_) << other->cert_pem;
  config_.set_ca_file(ca_file_);
  SetBaseUrl(Url("localhost"));
  auto client = Client();
  Metered<Completion> r = Call(*client, Request());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kFailedPrecondition) << r.value.status();
}

TEST_F(OpenAiClientTlsTest, TunnelsHttpsThroughAConnectProxyWithoutResolvingTheHost) {
  auto proxy = ConnectProxy::Start(double_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  config_.set_ca_file(ca_file_);
  ProxyConfig proxy_config;
  proxy_config.https_proxy = *core::ParseProxyUrl("127.0.0.1:" + std::to_string((*proxy)->port()));
  SetBaseUrl(Url("llm.double.test"));  // does not resolve: only the proxy may see it
  auto client = Client(proxy_config);
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  EXPECT_EQ(r.value->text, "secure");
  EXPECT_EQ((*proxy)->Tunnels(), std::vector<std::string>{"llm.double.test:" + std::to_string(double_->port())});
}

TEST_F(OpenAiClientTest, SendsAbsoluteFormRequestsThroughAnHttpProxy) {
  StartDouble(Script({}, Ok("proxied")));
  ProxyConfig proxy_config;
  proxy_config.http_proxy = *core::ParseProxyUrl("http://127.0.0.1:" + std::to_string(double_->port()));
  SetBaseUrl("http://llm.double.test:9/v1");
  auto client = Client(proxy_config);
  Metered<Completion> r = Call(*client, Request());
  ASSERT_TRUE(r.value.ok()) << r.value.status();
  ASSERT_EQ(double_->request_count(), 1);
  EXPECT_EQ(double_->Requests()[0].target, "http://llm.double.test:9/v1/chat/completions");
  // NO_PROXY sends the same URL directly, which fails: the host does not resolve.
  proxy_config.no_proxy = ParseNoProxy("double.test");
  config_.set_max_attempts(1);
  auto direct = Client(proxy_config);
  EXPECT_EQ(Call(*direct, Request()).value.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace accelopt::llm

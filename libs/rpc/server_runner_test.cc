#include "libs/rpc/server_runner.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "accelopt/v1/info_service.grpc.pb.h"
#include "google/protobuf/descriptor.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "libs/config/validate.h"
#include "libs/rpc/rpc_metrics.h"
#include "libs/testing/http_get.h"
#include "libs/testing/wait_until.h"

namespace accelopt::rpc {
namespace {

v1::ServerConfig TestConfig() {
  v1::ServerConfig c;
  config::ApplyServerDefaults(&c);
  c.set_drain_seconds(1);
  return c;
}

// The /metrics page once it contains `sample` (or the last page fetched, after 10 s). The RPC interceptor
// records a call when it is destroyed, just after the response left, so there is no event to wait on.
std::string MetricsOnceTheyShow(const std::string& metrics_address, const std::string& sample) {
  std::string body;
  absl::Status waited = testing::WaitUntil(
      [&] {
        absl::StatusOr<std::string> page = testing::HttpGet(metrics_address, "/metrics");
        if (!page.ok()) {
          ADD_FAILURE() << page.status();
          return true;  // stop waiting: the page itself is broken
        }
        body = *std::move(page);
        return body.find(sample) != std::string::npos;
      },
      std::chrono::seconds(10), sample);
  EXPECT_TRUE(waited.ok()) << waited;
  return body;
}

TEST(ServerRunnerTest, ServesHealthInfoAndRpcMetrics) {
  auto registry = std::make_shared<prometheus::Registry>();
  ServerRunner runner("unit", TestConfig(), registry);
  runner.SetServedModels({{"builtin", "openai"}, [](const v1::ModelSpec& spec) {
                            return spec.provider() == "builtin" ? absl::OkStatus()
                                                                : absl::InvalidArgumentError("model.provider: unknown");
                          }});
  ASSERT_TRUE(runner.Start().ok());
  auto channel = grpc::CreateChannel(runner.grpc_address(), grpc::InsecureChannelCredentials());

  grpc::health::v1::HealthCheckResponse health;
  grpc::ClientContext hctx;
  ASSERT_TRUE(
      grpc::health::v1::Health::NewStub(channel)->Check(&hctx, grpc::health::v1::HealthCheckRequest(), &health).ok());
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  v1::GetInfoResponse info;
  grpc::ClientContext ictx;
  ASSERT_TRUE(v1::InfoService::NewStub(channel)->GetInfo(&ictx, v1::GetInfoRequest(), &info).ok());
  EXPECT_EQ(info.service(), "unit");
  EXPECT_EQ(info.metrics_address(), runner.metrics_address());
  EXPECT_EQ(std::vector<std::string>(info.model_providers().begin(), info.model_providers().end()),
            (std::vector<std::string>{"builtin", "openai"}));
  v1::CheckModelRequest check;
  check.mutable_model()->set_provider("builtin");
  v1::CheckModelResponse checked;
  grpc::ClientContext cctx;
  EXPECT_TRUE(v1::InfoService::NewStub(channel)->CheckModel(&cctx, check, &checked).ok());
  check.mutable_model()->set_provider("x");
  grpc::ClientContext bad_ctx;
  grpc::Status bad = v1::InfoService::NewStub(channel)->CheckModel(&bad_ctx, check, &checked);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error_message(), "model.provider: unknown");

  // The interceptor records the call when it is destroyed, just after the response left: poll.
  const std::string sample =
      "accelopt_rpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"GetInfo\",grpc_service=\"accelopt.v1."
      "InfoService\"} 1";
  std::string body = MetricsOnceTheyShow(runner.metrics_address(), sample);
  EXPECT_NE(body.find(sample), std::string::npos) << body;
  runner.Shutdown();
}

grpc::health::v1::HealthCheckResponse::ServingStatus HealthOf(const std::shared_ptr<grpc::Channel>& channel,
                                                              const std::string& service) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  grpc::Status status = grpc::health::v1::Health::NewStub(channel)->Check(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) return grpc::health::v1::HealthCheckResponse::SERVICE_UNKNOWN;
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status();
}

TEST(ServerRunnerTest, EveryRegisteredServiceHasANamedHealthStatus) {
  ServerRunner runner("unit", TestConfig(), std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(runner.Start().ok());
  auto channel = grpc::CreateChannel(runner.grpc_address(), grpc::InsecureChannelCredentials());
  EXPECT_EQ(HealthOf(channel, "accelopt.v1.InfoService"), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(HealthOf(channel, "liveness"), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(HealthOf(channel, "accelopt.v1.NoSuchService"), grpc::health::v1::HealthCheckResponse::SERVICE_UNKNOWN);
  EXPECT_NE(std::find(runner.service_names().begin(), runner.service_names().end(), "accelopt.v1.InfoService"),
            runner.service_names().end());
  // Reflection can only resolve what is linked: the health protocol's descriptor must be.
  EXPECT_NE(google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("grpc.health.v1.Health"), nullptr);
}

TEST(ServerRunnerTest, ReadinessFollowsTheCheckWhileLivenessStaysServing) {
  absl::Mutex mu;
  absl::Status dependency = absl::OkStatus();
  int checks = 0;
  ServerRunner runner("unit", TestConfig(), std::make_shared<prometheus::Registry>());
  runner.SetReadinessCheck(
      [&] {
        absl::MutexLock lock(&mu);
        ++checks;
        return dependency;
      },
      absl::Milliseconds(10));
  ASSERT_TRUE(runner.Start().ok());
  auto channel = grpc::CreateChannel(runner.grpc_address(), grpc::InsecureChannelCredentials());
  // Blocks until the readiness loop has run `n` more checks (so it has applied the latest answer).
  auto checks_after = [&](int n) {
    absl::MutexLock lock(&mu);
    struct Target {
      const int* checks;
      int value;
      bool Reached() const { return *checks >= value; }
    } target{&checks, checks + n};
    mu.Await(absl::Condition(&target, &Target::Reached));
  };
  {
    absl::MutexLock lock(&mu);
    dependency = absl::UnavailableError("store closed");
  }
  checks_after(2);  // the loop has seen the failure and applied it
  EXPECT_EQ(HealthOf(channel, ""), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(HealthOf(channel, "accelopt.v1.InfoService"), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(HealthOf(channel, "liveness"), grpc::health::v1::HealthCheckResponse::SERVING);
  {
    absl::MutexLock lock(&mu);
    dependency = absl::OkStatus();
  }
  checks_after(2);
  EXPECT_EQ(HealthOf(channel, ""), grpc::health::v1::HealthCheckResponse::SERVING);
  runner.Shutdown();
}

TEST(RpcMethodLabelsTest, OnlyDeclaredServicesAndMethodsGetTheirNames) {
  EXPECT_EQ(RpcMethodLabels("/accelopt.v1.InfoService/GetInfo"),
            std::make_pair(std::string("accelopt.v1.InfoService"), std::string("GetInfo")));
  EXPECT_EQ(RpcMethodLabels("/accelopt.v1.InfoService/MadeUp123"),
            std::make_pair(std::string("accelopt.v1.InfoService"), std::string("unknown")));
  EXPECT_EQ(RpcMethodLabels("/evil.Service/X"), std::make_pair(std::string("unknown"), std::string("unknown")));
  EXPECT_EQ(RpcMethodLabels("garbage"), std::make_pair(std::string("unknown"), std::string("unknown")));
  EXPECT_EQ(RpcMethodLabels("/grpc.health.v1.Health/Check"),
            std::make_pair(std::string("grpc.health.v1.Health"), std::string("Check")));
}

TEST(ServerRunnerTest, MadeUpMethodsDoNotGrowMetrics) {
  auto registry = std::make_shared<prometheus::Registry>();
  ServerRunner runner("unit", TestConfig(), registry);
  ASSERT_TRUE(runner.Start().ok());
  auto channel = grpc::CreateChannel(runner.grpc_address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Slice empty(std::string{});
    grpc::ByteBuffer request(&empty, 1), response;
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, absl::StrCat("/made.up.Service", i, "/Method", i), grpc::StubOptions(), &request,
                   &response, [&](grpc::Status s) {
                     status = std::move(s);
                     done.Notify();
                   });
    done.WaitForNotification();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  const std::string sample =
      "accelopt_rpc_server_handled_total{grpc_code=\"UNIMPLEMENTED\",grpc_method=\"unknown\",grpc_service="
      "\"unknown\"} 20";
  std::string body = MetricsOnceTheyShow(runner.metrics_address(), sample);
  EXPECT_NE(body.find(sample), std::string::npos) << body;
  EXPECT_EQ(body.find("made.up"), std::string::npos);
  EXPECT_EQ(body.find("Method1"), std::string::npos);
}

TEST(ServerRunnerTest, PortInUseIsOneClearError) {
  auto registry = std::make_shared<prometheus::Registry>();
  ServerRunner first("a", TestConfig(), registry);
  ASSERT_TRUE(first.Start().ok());
  v1::ServerConfig cfg = TestConfig();
  cfg.set_grpc_address(first.grpc_address());
  ServerRunner second("b", cfg, std::make_shared<prometheus::Registry>());
  absl::Status s = second.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("cannot listen on " + first.grpc_address()), std::string::npos) << s;
  EXPECT_NE(s.message().find("in use"), std::string::npos) << s;
}

}  // namespace
}  // namespace accelopt::rpc

#include "libs/rpc/server_runner.h"

#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "accelopt/v1/info_service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "libs/config/validate.h"
#include "libs/testing/http_get.h"

namespace accelopt::rpc {
namespace {

v1::ServerConfig TestConfig() {
  v1::ServerConfig c;
  config::ApplyServerDefaults(&c);
  c.set_drain_seconds(1);
  return c;
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
      "accelopt_rpc_server_handled_total{code=\"OK\",method=\"GetInfo\",service=\"accelopt.v1.InfoService\"} 1";
  absl::StatusOr<std::string> body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    body = testing::HttpGet(runner.metrics_address(), "/metrics");
    ASSERT_TRUE(body.ok());
    if (body->find(sample) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(body->find(sample), std::string::npos) << *body;
  runner.Shutdown();
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

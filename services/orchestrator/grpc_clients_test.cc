// The gRPC agent clients against a real in-process planner server that goes away and comes back on the
// same port (a rolling restart), or never comes back.
#include "services/orchestrator/grpc_clients.h"

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/core/file.h"
#include "libs/rpc/tls_credentials.h"
#include "libs/security/pki.h"
#include "libs/testing/child_process.h"
#include "libs/testing/scratch_dir.h"
#include "prometheus/registry.h"

namespace accelopt::orchestrator {
namespace {

// Answers every Plan with one sample and counts the calls.
class CannedPlanner : public v1::PlannerService::CallbackService {
 public:
  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* context, const v1::PlanRequest*,
                                 v1::PlanResponse* response) override {
    calls.fetch_add(1);
    response->add_samples()->set_error("canned");
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  std::atomic<int> calls{0};
};

class GrpcClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int port = testing::PickFreePort();
    ASSERT_GT(port, 0);
    address_ = absl::StrCat("127.0.0.1:", port);
    metrics_ = std::make_unique<OrchestratorMetrics>(OrchestratorMetrics::Create(registry_));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }
  void StartServer() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(address_, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&planner_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0) << "cannot listen on " << address_;
  }
  AgentRetryOptions Retry(absl::Duration max_elapsed) {
    AgentRetryOptions retry;
    retry.policy.initial_backoff = absl::Milliseconds(50);
    retry.policy.max_backoff = absl::Milliseconds(200);
    retry.policy.max_elapsed = max_elapsed;
    retry.metrics = metrics_.get();
    retry.on_retry = [this](const AgentRetryEvent& event) {
      EXPECT_EQ(event.agent, "planner");
      EXPECT_EQ(event.method, "Plan");
      EXPECT_EQ(event.job_id, "job-1");
      if (event.gave_up) {
        give_ups_.fetch_add(1);
        give_up_retries_ = event.retry;
        return;
      }
      if (retries_.fetch_add(1) + 1 == 3) third_retry_.set_value();
    };
    return retry;
  }
  double RetriesCounted(const std::string& code) {
    return metrics_->agent_retries.Add({{"agent", "planner"}, {"code", code}}).Value();
  }
  std::future<absl::StatusOr<v1::PlanResponse>> Plan(GrpcPlannerClient& client, absl::Duration deadline) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<v1::PlanResponse>>>();
    auto future = promise->get_future();
    v1::PlanRequest request;
    request.set_job_id("job-1");
    handle_ = client.Plan(request, deadline,
                          [promise](absl::StatusOr<v1::PlanResponse> r) { promise->set_value(std::move(r)); });
    return future;
  }

  std::string address_;
  prometheus::Registry registry_;
  std::unique_ptr<OrchestratorMetrics> metrics_;
  CannedPlanner planner_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<int> retries_{0};
  std::atomic<int> give_ups_{0};
  std::atomic<int> give_up_retries_{0};
  std::promise<void> third_retry_;
  std::shared_ptr<CallHandle> handle_;
};

TEST_F(GrpcClientsTest, ACallSurvivesThePlannerComingBackOnItsPort) {
  // Up once, then down (restarting): the channel has seen the service and lost it.
  StartServer();
  server_->Shutdown(std::chrono::system_clock::now());
  server_.reset();
  GrpcPlannerClient client(MakeChannel(address_), Retry(absl::Seconds(30)));
  auto result = Plan(client, absl::Seconds(60));
  // Back only after the call has been retried three times.
  ASSERT_EQ(third_retry_.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  StartServer();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<v1::PlanResponse> response = result.get();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->samples_size(), 1);
  EXPECT_GE(retries_.load(), 3);
  EXPECT_EQ(RetriesCounted("UNAVAILABLE"), retries_.load());
  EXPECT_EQ(give_ups_.load(), 0);
}

TEST_F(GrpcClientsTest, ACallGivesUpWithinItsBoundSayingHowItRetried) {
  GrpcPlannerClient client(MakeChannel(address_), Retry(absl::Seconds(1)));
  const absl::Time start = absl::Now();
  auto result = Plan(client, absl::Seconds(60));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  const absl::Duration took = absl::Now() - start;
  absl::StatusOr<v1::PlanResponse> response = result.get();
  ASSERT_TRUE(absl::IsUnavailable(response.status())) << response.status();
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_GE(retries_.load(), 3);
  EXPECT_EQ(give_ups_.load(), 1);
  EXPECT_EQ(give_up_retries_.load(), retries_.load());
  EXPECT_NE(response.status().message().find(absl::StrCat("(retried ", retries_.load(), " times for ")),
            std::string::npos)
      << response.status();
}

TEST_F(GrpcClientsTest, TheCallsOwnDeadlineBoundsItsRetries) {
  GrpcPlannerClient client(MakeChannel(address_), Retry(absl::Seconds(60)));
  const absl::Time start = absl::Now();
  auto result = Plan(client, absl::Milliseconds(700));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  const absl::Status status = result.get().status();
  EXPECT_TRUE(absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status)) << status;
}

TEST_F(GrpcClientsTest, CancelStopsTheRetries) {
  GrpcPlannerClient client(MakeChannel(address_), Retry(absl::Seconds(60)));
  auto result = Plan(client, absl::Seconds(60));
  ASSERT_EQ(third_retry_.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  handle_->Cancel();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(absl::IsCancelled(result.get().status()));
  EXPECT_EQ(give_ups_.load(), 0);
}

TEST_F(GrpcClientsTest, DestroyingTheClientCancelsItsCallsAndWaitsForThem) {
  // Nothing listens: the call retries until its owner goes away.
  auto client = std::make_unique<GrpcPlannerClient>(MakeChannel(address_), Retry(absl::Seconds(60)));
  auto result = Plan(*client, absl::Seconds(60));
  ASSERT_EQ(third_retry_.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  client.reset();
  // The call had reported before the destructor returned.
  ASSERT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(absl::IsCancelled(result.get().status()));
}

TEST_F(GrpcClientsTest, CallsSpreadOverEveryAddressTheTargetResolvesTo) {
  // Two planner pods behind one name (a headless Service): a static two-address target stands in for DNS.
  CannedPlanner second;
  const int second_port = testing::PickFreePort();
  ASSERT_GT(second_port, 0);
  StartServer();
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", second_port), grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(&second);
  std::unique_ptr<grpc::Server> second_server = builder.BuildAndStart();
  ASSERT_NE(bound, 0);
  GrpcPlannerClient client(MakeChannel(absl::StrCat("ipv4:", address_, ",127.0.0.1:", second_port)),
                           Retry(absl::Seconds(5)));
  // Round robin spreads calls over the addresses whose connections are ready; the second one may connect a few
  // calls later on a loaded machine, so the calls go on (at most 200) until both have served one.
  int made = 0;
  while (made < 10 || (made < 200 && (planner_.calls.load() == 0 || second.calls.load() == 0))) {
    auto result = Plan(client, absl::Seconds(10));
    ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    ASSERT_TRUE(result.get().ok());
    ++made;
  }
  EXPECT_GE(planner_.calls.load(), 1);
  EXPECT_GE(second.calls.load(), 1);
  EXPECT_EQ(planner_.calls.load() + second.calls.load(), made);
  second_server->Shutdown(std::chrono::system_clock::now());
}

// Workers found through a DNS name are dialled by IP: over TLS, their certificate (which names the DNS name, as a
// cert-manager certificate for a headless Service does) is checked against that name.
TEST(GrpcProfilerWorkerTlsTest, AWorkerDialledByIpIsVerifiedAgainstItsDnsName) {
  auto ca = security::MakeCertificateAuthority("test CA", absl::Hours(1));
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto leaf = security::IssueCertificate(*ca, "profiler", {"profilers.accelopt.example"}, {}, absl::Hours(1));
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  accelopt::testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  ASSERT_TRUE(core::WriteFileAtomic(dir + "/ca.pem", ca->certificate).ok());
  ASSERT_TRUE(core::WriteFileAtomic(dir + "/leaf.pem", leaf->certificate).ok());
  ASSERT_TRUE(core::WriteFileAtomic(dir + "/leaf-key.pem", leaf->private_key).ok());
  v1::ServerConfig server;
  server.mutable_tls()->set_cert_file(dir + "/leaf.pem");
  server.mutable_tls()->set_key_file(dir + "/leaf-key.pem");
  auto server_credentials = rpc::MakeServerCredentials(server);
  ASSERT_TRUE(server_credentials.ok()) << server_credentials.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", *server_credentials, &port);
  CannedPlanner any_service;  // a server needs one service besides health
  builder.RegisterService(&any_service);
  std::unique_ptr<grpc::Server> worker = builder.BuildAndStart();
  ASSERT_NE(worker, nullptr);
  grpc::HealthCheckServiceInterface* health = worker->GetHealthCheckService();
  ASSERT_NE(health, nullptr);
  health->SetServingStatus(true);
  v1::TlsConfig client;
  client.set_ca_file(dir + "/ca.pem");
  auto channel_credentials = rpc::MakeChannelCredentials(client);
  ASSERT_TRUE(channel_credentials.ok()) << channel_credentials.status();
  const std::string address = absl::StrCat("127.0.0.1:", port);
  auto check = [](GrpcProfilerWorker& w) {
    auto result = std::make_shared<std::promise<absl::Status>>();
    auto future = result->get_future();
    w.CheckHealth(absl::Seconds(5), [result](absl::Status s) { result->set_value(std::move(s)); });
    return future.get();
  };
  GrpcProfilerWorker named(address, *channel_credentials, "profilers.accelopt.example");
  EXPECT_TRUE(check(named).ok());
  GrpcProfilerWorker by_ip(address, *channel_credentials);  // the certificate does not name 127.0.0.1
  EXPECT_FALSE(check(by_ip).ok());
  worker->Shutdown(std::chrono::system_clock::now());
}

}  // namespace
}  // namespace accelopt::orchestrator

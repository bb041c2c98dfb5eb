#include "services/orchestrator/orchestrator_service.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "libs/rpc/info_service.h"
#include "libs/testing/scratch_dir.h"
#include "services/orchestrator/agent_providers.h"
#include "services/orchestrator/grpc_clients.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/testing/fake_clients.h"

namespace accelopt::orchestrator {
namespace {

using testing::FakeKernel;

class JobServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kv_ = *storage::KvStore::Open(scratch_.Path("store"), JobStoreFamilies());
    store_ = std::make_unique<JobStore>(kv_.get());
    JobEngine::Options options;
    options.limits = {1000, 5000};
    options.tick = absl::Milliseconds(20);
    engine_ = std::make_unique<JobEngine>(options, store_.get(),
                                          JobEngine::Clients{&planner_, &executor_, &memory_, &pool_}, nullptr);
    ASSERT_TRUE(engine_->Start().ok());
    service_ = std::make_unique<JobServiceImpl>(engine_.get());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::JobService::NewStub(MakeChannel("127.0.0.1:" + std::to_string(port)));
  }
  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now());
    engine_.reset();
  }

  v1::JobSpec Spec() {
    v1::JobSpec spec;
    spec.set_preset("smoke");
    spec.mutable_problem()->set_name("fake");
    spec.mutable_problem()->set_reference_source("def forward(x): return x\n");
    spec.mutable_baseline()->set_source(FakeKernel(1.0, "baseline"));
    spec.mutable_search()->set_iterations(2);
    return spec;
  }

  grpc::Status Submit(const v1::JobSpec& spec, v1::SubmitJobResponse* response) {
    grpc::ClientContext context;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    return stub_->SubmitJob(&context, request, response);
  }

  v1::Job WaitFinished(const std::string& id) {
    v1::Job job;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      grpc::ClientContext context;
      v1::GetJobRequest request;
      request.set_job_id(id);
      EXPECT_TRUE(stub_->GetJob(&context, request, &job).ok());
      if (job.state() == v1::JOB_STATE_SUCCEEDED || job.state() == v1::JOB_STATE_FAILED ||
          job.state() == v1::JOB_STATE_CANCELLED) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return job;
  }

  // Reads a WatchJob stream from `from` until it ends or `max` events arrived.
  std::vector<v1::JobEvent> Watch(const std::string& id, int64_t from, size_t max, grpc::Status* status) {
    grpc::ClientContext context;
    v1::WatchJobRequest request;
    request.set_job_id(id);
    request.set_from_sequence(from);
    auto reader = stub_->WatchJob(&context, request);
    std::vector<v1::JobEvent> events;
    v1::JobEvent e;
    while (events.size() < max && reader->Read(&e)) events.push_back(e);
    if (events.size() >= max) context.TryCancel();
    *status = reader->Finish();
    return events;
  }

  testing::FakePlanner planner_;
  testing::FakeExecutor executor_;
  testing::FakeMemory memory_;
  testing::FakeProfilerPool pool_{2};
  accelopt::testing::ScratchDir scratch_;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<JobEngine> engine_;
  std::unique_ptr<JobServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::JobService::Stub> stub_;
};

TEST_F(JobServiceTest, SubmitHasTheAgentServicesCheckTheModels) {
  // One InfoService stands in for the three agent services: it serves builtin, and openai with an endpoint.
  rpc::InfoServiceImpl info("agent");
  info.set_served_models({{"builtin", "openai"}, [](const v1::ModelSpec& model) {
                            if (model.provider() != "builtin" && model.provider() != "openai") {
                              return absl::InvalidArgumentError(
                                  absl::StrCat("model.provider: unknown provider '", model.provider(), "'"));
                            }
                            if (model.provider() == "openai" && model.endpoint().empty()) {
                              return absl::InvalidArgumentError("model.endpoint: required");
                            }
                            return absl::OkStatus();
                          }});
  int info_port = 0;
  grpc::ServerBuilder info_builder;
  info_builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &info_port);
  info_builder.RegisterService(&info);
  std::unique_ptr<grpc::Server> info_server = info_builder.BuildAndStart();
  ASSERT_NE(info_server, nullptr);
  GrpcAgentInfoClient agent(MakeChannel("127.0.0.1:" + std::to_string(info_port)));
  AgentProviders providers({&agent, &agent, &agent}, absl::Seconds(10));
  JobServiceImpl checked(engine_.get(), {nullptr, nullptr}, &providers);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&checked);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = v1::JobService::NewStub(MakeChannel("127.0.0.1:" + std::to_string(port)));
  auto submit = [&stub](const v1::SubmitJobRequest& request, v1::SubmitJobResponse* response) {
    grpc::ClientContext context;
    return stub->SubmitJob(&context, request, response);
  };

  v1::SubmitJobRequest request;
  *request.mutable_spec() = Spec();
  request.mutable_spec()->mutable_models()->mutable_executor()->set_provider("openai");
  v1::SubmitJobResponse response;
  grpc::Status rejected = submit(request, &response);
  EXPECT_EQ(rejected.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(rejected.error_message(), "spec.models.executor.endpoint: required");

  request.mutable_spec()->mutable_models()->mutable_planner()->set_provider("mystery");
  rejected = submit(request, &response);
  EXPECT_EQ(rejected.error_message(), "spec.models.planner.provider: unknown provider 'mystery'");

  request.mutable_spec()->clear_models();
  grpc::Status accepted = submit(request, &response);
  ASSERT_TRUE(accepted.ok()) << accepted.error_message();
  EXPECT_TRUE(response.created());
  WaitFinished(response.job().job_id());
  server->Shutdown(std::chrono::system_clock::now());
  info_server->Shutdown(std::chrono::system_clock::now());
}

TEST_F(JobServiceTest, BadSpecsAreInvalidArgumentNamingTheField) {
  v1::SubmitJobResponse response;
  v1::JobSpec spec = Spec();
  spec.mutable_search()->set_beam_width(-1);
  grpc::Status s = Submit(spec, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("spec.search.beam_width:", 0), 0u) << s.error_message();

  spec = Spec();
  spec.mutable_baseline()->set_source(std::string(300 << 10, 'k'));
  s = Submit(spec, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("max_kernel_bytes (1000)"), std::string::npos) << s.error_message();

  spec = Spec();
  spec.mutable_problem()->set_reference_source(std::string(6000, 'p'));
  s = Submit(spec, &response);
  EXPECT_NE(s.error_message().find("max_problem_bytes (5000)"), std::string::npos) << s.error_message();
}

TEST_F(JobServiceTest, UnknownJobIsNotFound) {
  grpc::ClientContext context;
  v1::GetJobRequest request;
  request.set_job_id("job-missing");
  v1::Job job;
  EXPECT_EQ(stub_->GetJob(&context, request, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::Status status;
  Watch("job-missing", 1, 10, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(JobServiceTest, WatchResumesFromASequenceWithoutGapsOrRepeats) {
  executor_.SetHold(true);
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE(Submit(Spec(), &submitted).ok());
  const std::string id = submitted.job().job_id();
  // A first watcher reads three events and disconnects.
  grpc::Status status;
  auto first = Watch(id, 0, 3, &status);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first.back().sequence(), 3);
  // The job goes on; a second watcher resumes after the last event it saw and follows to the end.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (executor_.held().size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(executor_.held().size(), 2);
  executor_.SetHold(false);
  executor_.held().ReleaseAll();
  auto rest = Watch(id, first.back().sequence() + 1, 100000, &status);
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(rest.empty());
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i].sequence(), static_cast<int64_t>(i + 4));
  EXPECT_EQ(rest.back().state_changed().state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(JobServiceTest, ReportHasTheLineageFromTheBaselineToTheBest) {
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE(Submit(Spec(), &submitted).ok());
  v1::Job job = WaitFinished(submitted.job().job_id());
  ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  grpc::ClientContext context;
  v1::GetJobReportRequest request;
  request.set_job_id(job.job_id());
  v1::JobReport report;
  ASSERT_TRUE(stub_->GetJobReport(&context, request, &report).ok());
  ASSERT_GE(report.lineage_size(), 1);
  EXPECT_EQ(report.lineage(0).candidate_id(), kBaselineCandidateId);
  EXPECT_EQ(report.lineage(report.lineage_size() - 1).candidate_id(), job.best_candidate_id());
  EXPECT_EQ(report.best().candidate_id(), job.best_candidate_id());
  for (int i = 1; i < report.lineage_size(); ++i) {
    EXPECT_EQ(report.lineage(i).parent_id(), report.lineage(i - 1).candidate_id());
  }
  EXPECT_NE(report.markdown().find("## Lineage"), std::string::npos);
  EXPECT_NE(report.html().find("Latency over iterations"), std::string::npos);
  EXPECT_NE(report.html().find("class=\"node best-lineage\""), std::string::npos);
  EXPECT_EQ(report.html().find("<script"), std::string::npos);
  grpc::ClientContext again_context;
  v1::JobReport again;
  ASSERT_TRUE(stub_->GetJobReport(&again_context, request, &again).ok());
  EXPECT_EQ(again.html(), report.html());  // byte-stable

  grpc::ClientContext list_context;
  v1::ListCandidatesRequest list;
  list.set_job_id(job.job_id());
  list.set_omit_sources(true);
  v1::ListCandidatesResponse candidates;
  ASSERT_TRUE(stub_->ListCandidates(&list_context, list, &candidates).ok());
  int64_t counted = 0;
  for (const auto& [verdict, n] : job.candidates()) counted += n;
  EXPECT_EQ(candidates.candidates_size(), counted);
  for (const auto& c : candidates.candidates()) EXPECT_TRUE(c.kernel().source().empty());
}

}  // namespace
}  // namespace accelopt::orchestrator

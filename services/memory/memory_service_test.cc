#include "services/memory/memory_service.h"

#include <gmock/gmock.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "libs/config/validate.h"
#include "libs/rpc/server_runner.h"
#include "libs/testing/http_get.h"
#include "libs/testing/scratch_dir.h"
#include "services/memory/fake_summarizer.h"
#include "services/memory/memory_test_util.h"

namespace accelopt::memory {
namespace {

using ::accelopt::memory::testing::Request;
using ::accelopt::memory::testing::Sample;
using ::testing::HasSubstr;

// The service on a real server (free loopback port) over a fresh store, with the fake summarizer.
class MemoryServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kv_ = std::move(storage::KvStore::Open(scratch_.Path("store"), ExperienceStore::Families()).value());
    store_ = std::move(ExperienceStore::Open(kv_.get()).value());
    summarizers_.Register("fake", std::make_unique<FakeSummarizer>());
    service_ = std::make_unique<MemoryServiceImpl>(store_.get(), &summarizers_, &metrics_, &pool_);
    v1::ServerConfig config;
    config::ApplyServerDefaults(&config);
    config.set_drain_seconds(1);
    runner_ = std::make_unique<rpc::ServerRunner>("memory", config, registry_);
    runner_->AddService(service_.get());
    ASSERT_TRUE(runner_->Start().ok());
    stub_ =
        v1::MemoryService::NewStub(grpc::CreateChannel(runner_->grpc_address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    runner_->Shutdown();
    pool_.join();
  }

  v1::SummarizeIterationResponse Summarize(const v1::SummarizeIterationRequest& request) {
    grpc::ClientContext context;
    v1::SummarizeIterationResponse response;
    grpc::Status status = stub_->SummarizeIteration(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  MemoryMetrics metrics_ = MemoryMetrics::Create(*registry_);
  boost::asio::thread_pool pool_{2};
  accelopt::testing::ScratchDir scratch_;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<ExperienceStore> store_;
  SummarizerRegistry summarizers_;
  std::unique_ptr<MemoryServiceImpl> service_;
  std::unique_ptr<rpc::ServerRunner> runner_;
  std::unique_ptr<v1::MemoryService::Stub> stub_;
};

TEST_F(MemoryServiceTest, SummarizeThenQueryListExportAndImport) {
  v1::SummarizeIterationRequest request = Request("job-1", "job-1", 1);
  *request.add_samples() = Sample("c0", 0, 0, 1.5);
  *request.add_samples() = Sample("c0", 1, 0, 0.5);
  v1::SummarizeIterationResponse summarized = Summarize(request);
  ASSERT_EQ(summarized.added_size(), 2);
  EXPECT_EQ(summarized.usage().requests(), 2);

  request.set_iteration(2);
  request.clear_samples();
  *request.add_samples() = Sample("c9", 0, 0, 2.0);
  ASSERT_EQ(Summarize(request).added_size(), 1);

  grpc::ClientContext qctx;
  v1::QueryExperiencesRequest query;
  query.set_namespace_("job-1");
  query.set_capacity(2);
  query.set_policy(v1::MEMORY_POLICY_FIFO);
  v1::QueryExperiencesResponse queried;
  ASSERT_TRUE(stub_->QueryExperiences(&qctx, query, &queried).ok());
  ASSERT_EQ(queried.experiences_size(), 2);
  EXPECT_EQ(queried.experiences(0).provenance().candidate_id(), "c9-p0-s0");
  EXPECT_EQ(queried.experiences(1).provenance().candidate_id(), "c0-p1-s0");

  grpc::ClientContext rctx;
  query.set_policy(v1::MEMORY_POLICY_RANDOM);
  query.set_seed(3);
  ASSERT_TRUE(stub_->QueryExperiences(&rctx, query, &queried).ok());
  ASSERT_EQ(queried.experiences_size(), 2);
  EXPECT_EQ(queried.experiences(0).provenance().candidate_id(), "c9-p0-s0");

  grpc::ClientContext lctx;
  v1::ListExperiencesResponse listed;
  ASSERT_TRUE(stub_->ListExperiences(&lctx, v1::ListExperiencesRequest(), &listed).ok());
  EXPECT_EQ(listed.experiences_size(), 3);

  grpc::ClientContext ectx;
  v1::ExportExperiencesResponse exported;
  ASSERT_TRUE(stub_->ExportExperiences(&ectx, v1::ExportExperiencesRequest(), &exported).ok());
  EXPECT_EQ(exported.count(), 3);

  grpc::ClientContext ictx;
  v1::ImportExperiencesRequest import;
  import.set_jsonl(exported.jsonl());
  v1::ImportExperiencesResponse imported;
  ASSERT_TRUE(stub_->ImportExperiences(&ictx, import, &imported).ok());
  EXPECT_EQ(imported.imported(), 0);
  EXPECT_EQ(imported.skipped(), 3);
}

TEST_F(MemoryServiceTest, BadRequestsAreInvalidArgumentNamingTheField) {
  v1::SummarizeIterationRequest request = Request("job-1", "job-1", 1);
  request.mutable_model()->set_provider("nobody");
  grpc::ClientContext sctx;
  v1::SummarizeIterationResponse summarized;
  grpc::Status s = stub_->SummarizeIteration(&sctx, request, &summarized);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("model.provider"));

  grpc::ClientContext qctx;
  v1::QueryExperiencesResponse queried;
  s = stub_->QueryExperiences(&qctx, v1::QueryExperiencesRequest(), &queried);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("namespace"));

  grpc::ClientContext ictx;
  v1::ImportExperiencesRequest import;
  import.set_jsonl("{}\n");
  v1::ImportExperiencesResponse imported;
  s = stub_->ImportExperiences(&ictx, import, &imported);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("line 1"));
}

TEST_F(MemoryServiceTest, ExportsMetrics) {
  v1::SummarizeIterationRequest request = Request("job-1", "job-1", 1);
  *request.add_samples() = Sample("c0", 0, 0, 1.5);
  Summarize(request);
  request = Request("job-1", "team", 1);
  *request.add_samples() = Sample("c0", 0, 0, 1.5);
  *request.add_samples() = Sample("c0", 1, 0, 1.6);
  Summarize(request);
  grpc::ClientContext qctx;
  v1::QueryExperiencesRequest query;
  query.set_namespace_("team");
  v1::QueryExperiencesResponse queried;
  ASSERT_TRUE(stub_->QueryExperiences(&qctx, query, &queried).ok());

  auto body = accelopt::testing::HttpGet(runner_->metrics_address(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("accelopt_memory_experiences_stored_total{namespace_kind=\"job\"} 1"));
  EXPECT_THAT(*body, HasSubstr("accelopt_memory_experiences_stored_total{namespace_kind=\"shared\"} 2"));
  EXPECT_THAT(*body, HasSubstr("accelopt_memory_summarizer_calls_total{outcome=\"ok\",provider=\"fake\"} 3"));
  EXPECT_THAT(*body, HasSubstr("accelopt_memory_query_seconds_count{policy=\"fifo\"} 1"));
  EXPECT_THAT(*body, HasSubstr("accelopt_memory_experiences 3"));
}

}  // namespace
}  // namespace accelopt::memory

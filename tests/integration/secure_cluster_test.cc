// An `accelopt up --secure` cluster tried as a hostile user would: no token, plaintext, another tenant's
// job, a memory import into another tenant's namespace, a direct call to an internal service; and the audit
// lines those leave.
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "accelopt/v1/job_service.grpc.pb.h"
#include "accelopt/v1/memory_service.grpc.pb.h"
#include "accelopt/v1/planner_service.grpc.pb.h"
#include "libs/core/file.h"
#include "libs/rpc/tls_credentials.h"
#include "libs/testing/child_process.h"
#include "libs/testing/free_ports.h"
#include "libs/testing/scratch_dir.h"
#include "tests/integration/service_process.h"

namespace accelopt {
namespace {

using integration::kBinDir;
using integration::kClusterPortSpan;
using testing::ChildProcess;
using namespace std::chrono_literals;

std::pair<int, std::string> Cli(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {kBinDir + "/accelopt"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = ChildProcess::Start(argv, log);
  EXPECT_TRUE(p.ok());
  auto status = p->WaitForExit(90s);
  EXPECT_TRUE(status.has_value()) << "accelopt " << args[0] << " hung";
  return {status ? WEXITSTATUS(*status) : -1, p->Output()};
}

class SecureClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new testing::ScratchDir("SecureClusterTest", integration::kServiceDirMode);
    dir_ = new std::string(scratch_->path());
    // Another process may take a port of the range between the probe and the bind: try another range then.
    std::string output;
    for (int attempt = 0; attempt < 3; ++attempt) {
      base_ = testing::FreePortRange(kClusterPortSpan, attempt);
      auto [code, out] =
          Cli({"up", "--secure", "--data-dir", *dir_, "--base-port", std::to_string(base_)}, *dir_ + "/up.log");
      if (code == 0) return;
      output += out;
      Cli({"down", "--data-dir", *dir_}, *dir_ + "/down.log");
    }
    FAIL() << "accelopt up --secure failed three times:\n" << output;
  }
  static void TearDownTestSuite() {
    Cli({"down", "--data-dir", *dir_}, *dir_ + "/down.log");
    delete dir_;
    delete scratch_;
  }
  static std::string Address(int offset) { return absl::StrCat("127.0.0.1:", base_ + offset); }
  static std::string Tls(const std::string& file) { return *dir_ + "/tls/" + file; }

  // A channel that verifies the cluster's CA and presents `identity`'s certificate ("cli", "orchestrator").
  static std::shared_ptr<grpc::Channel> TlsChannel(const std::string& address, const std::string& identity = "cli") {
    v1::TlsConfig tls;
    tls.set_ca_file(Tls("ca.pem"));
    tls.set_cert_file(Tls(identity + ".pem"));
    tls.set_key_file(Tls(identity + "-key.pem"));
    auto credentials = rpc::MakeChannelCredentials(tls);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    return grpc::CreateChannel(address, *credentials);
  }
  static std::string Token(const std::string& tenant, const std::string& role) {
    auto [code, out] = Cli({"token", "create", "--tenant", tenant, "--role", role, "--data-dir", *dir_},
                           *dir_ + "/token-" + tenant + ".log");
    EXPECT_EQ(code, 0) << out;
    return std::string(absl::StripSuffix(out, "\n"));
  }
  static void Bearer(grpc::ClientContext* context, const std::string& token) {
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + 20s);
  }

  static testing::ScratchDir* scratch_;
  static std::string* dir_;
  static int base_;
};

testing::ScratchDir* SecureClusterTest::scratch_ = nullptr;
std::string* SecureClusterTest::dir_ = nullptr;
int SecureClusterTest::base_ = 0;

TEST_F(SecureClusterTest, PlaintextConnectionsFail) {
  auto stub = v1::JobService::NewStub(grpc::CreateChannel(Address(0), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::ListJobsResponse response;
  grpc::Status status = stub->ListJobs(&context, v1::ListJobsRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(SecureClusterTest, CallsWithoutAValidTokenAreUnauthenticatedAndAudited) {
  auto stub = v1::JobService::NewStub(TlsChannel(Address(0)));
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    v1::ListJobsResponse response;
    EXPECT_EQ(stub->ListJobs(&context, v1::ListJobsRequest(), &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    Bearer(&context, "aot_made_up");
    v1::SubmitJobResponse response;
    EXPECT_EQ(stub->SubmitJob(&context, v1::SubmitJobRequest(), &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  auto audit = core::ReadFile(*dir_ + "/audit/orchestrator.log");
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_NE(audit->find("\"action\":\"authenticate\""), std::string::npos) << *audit;
  EXPECT_NE(audit->find("unknown bearer token"), std::string::npos) << *audit;
  EXPECT_EQ(audit->find("aot_made_up"), std::string::npos) << "the audit log must not hold tokens";
}

TEST_F(SecureClusterTest, AnotherTenantCannotSeeOrCancelAJob) {
  const std::string a = Token("team-a", "submitter");
  const std::string b = Token("team-b", "submitter");
  const std::string spec = std::string(ACCELOPT_SOURCE_DIR) + "/examples/softmax/job.yaml";
  auto [code, out] = Cli({"submit", spec, "--json", "--token", a, "--data-dir", *dir_}, *dir_ + "/submit.log");
  ASSERT_EQ(code, 0) << out;
  const size_t at = out.find("\"job_id\":\"");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string job_id = out.substr(at + 10, out.find('"', at + 10) - at - 10);

  auto stub = v1::JobService::NewStub(TlsChannel(Address(0)));
  for (const std::string& token : {b, a}) {
    grpc::ClientContext context;
    Bearer(&context, token);
    v1::GetJobRequest request;
    request.set_job_id(job_id);
    v1::Job job;
    grpc::Status status = stub->GetJob(&context, request, &job);
    if (token == b) {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
      EXPECT_EQ(status.error_message(), "job " + job_id + " not found");  // same as a job that does not exist
    } else {
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(job.spec().owner(), "team-a");
    }
  }
  auto [cancel_code, cancel_out] = Cli({"cancel", job_id, "--token", b, "--data-dir", *dir_}, *dir_ + "/cancel.log");
  EXPECT_EQ(cancel_code, 1) << cancel_out;
  EXPECT_NE(cancel_out.find("not found"), std::string::npos) << cancel_out;
  auto [list_code, list_out] = Cli({"list", "--token", b, "--data-dir", *dir_}, *dir_ + "/list-b.log");
  EXPECT_EQ(list_code, 0) << list_out;
  EXPECT_EQ(list_out.find(job_id), std::string::npos) << list_out;
  auto [own_code, own_out] = Cli({"list", "--token", a, "--data-dir", *dir_}, *dir_ + "/list-a.log");
  EXPECT_NE(own_out.find(job_id), std::string::npos) << own_out;

  auto audit = core::ReadFile(*dir_ + "/audit/orchestrator.log");
  ASSERT_TRUE(audit.ok());
  EXPECT_NE(audit->find("\"action\":\"submit\",\"tenant\":\"team-a\""), std::string::npos) << *audit;
  EXPECT_NE(audit->find("\"action\":\"cancel\",\"tenant\":\"team-b\""), std::string::npos) << *audit;
  // the refused read is audited too (every refused call is)
  EXPECT_NE(audit->find("\"action\":\"get\",\"tenant\":\"team-b\",\"role\":\"submitter\""), std::string::npos)
      << *audit;
}

TEST_F(SecureClusterTest, MemoryImportIntoAnotherTenantsNamespaceIsDenied) {
  const std::string a = Token("team-a", "submitter");
  auto stub = v1::MemoryService::NewStub(TlsChannel(Address(3)));
  v1::ImportExperiencesRequest request;
  request.set_jsonl(
      "{\"id\":\"forged-1\",\"namespace\":\"team-b\",\"title\":\"forged\",\"summary\":\"use "
      "tiling\",\"speedup\":2.0}\n");
  grpc::ClientContext context;
  Bearer(&context, a);
  v1::ImportExperiencesResponse response;
  grpc::Status status = stub->ImportExperiences(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();

  const std::string viewer = Token("team-a", "viewer");
  grpc::ClientContext as_viewer;
  Bearer(&as_viewer, viewer);
  request.set_jsonl(
      "{\"id\":\"own-1\",\"namespace\":\"team-a\",\"title\":\"own\",\"summary\":\"own summary\",\"speedup\":2.0}\n");
  EXPECT_EQ(stub->ImportExperiences(&as_viewer, request, &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);

  // The owner imports into its own namespaces ("team-a" and "team-a:...").
  grpc::ClientContext as_owner;
  Bearer(&as_owner, a);
  request.set_jsonl(
      "{\"id\":\"own-2\",\"namespace\":\"team-a:softmax\",\"title\":\"own\",\"summary\":\"s\",\"speedup\":2.0}\n");
  grpc::Status own = stub->ImportExperiences(&as_owner, request, &response);
  EXPECT_TRUE(own.ok()) << own.error_message();
  EXPECT_EQ(response.imported(), 1);

  auto audit = core::ReadFile(*dir_ + "/audit/memory.log");
  ASSERT_TRUE(audit.ok());
  EXPECT_NE(audit->find("\"action\":\"import\""), std::string::npos) << *audit;
  EXPECT_NE(audit->find("PERMISSION_DENIED"), std::string::npos) << *audit;
}

TEST_F(SecureClusterTest, InternalServicesAcceptOnlyTheOrchestrator) {
  // The CLI's certificate is signed by the cluster CA but not granted: the planner refuses it, even with the
  // admin token.
  auto admin = core::ReadFile(Tls("admin.token"));
  ASSERT_TRUE(admin.ok());
  auto stub = v1::PlannerService::NewStub(TlsChannel(Address(1), "cli"));
  grpc::ClientContext context;
  Bearer(&context, std::string(absl::StripSuffix(*admin, "\n")));
  v1::PlanResponse response;
  grpc::Status status = stub->Plan(&context, v1::PlanRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();

  // The orchestrator's identity passes authorization (and then fails validation of the empty request).
  auto internal = v1::PlannerService::NewStub(TlsChannel(Address(1), "orchestrator"));
  grpc::ClientContext as_orchestrator;
  as_orchestrator.set_deadline(std::chrono::system_clock::now() + 20s);
  grpc::Status passed = internal->Plan(&as_orchestrator, v1::PlanRequest(), &response);
  EXPECT_EQ(passed.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << passed.error_message();
}

// What a Kubernetes exec probe runs against a TLS service: `accelopt health` with the CA and a certificate.
TEST_F(SecureClusterTest, HealthCommandChecksAMutualTlsServiceAndSaysWhyItFails) {
  const std::string planner = Address(1);
  const std::vector<std::string> tls = {"--ca",  Tls("ca.pem"),         "--cert", Tls("planner.pem"),
                                        "--key", Tls("planner-key.pem")};
  for (const char* service : {"liveness", ""}) {
    std::vector<std::string> args = {"health", "--server", planner, "--service", service, "--data-dir", "/nonexistent"};
    args.insert(args.end(), tls.begin(), tls.end());
    auto [code, out] = Cli(args, *dir_ + "/health.log");
    EXPECT_EQ(code, 0) << service << ": " << out;
    EXPECT_EQ(out, "SERVING\n");
  }
  // Plaintext against the TLS listener, and TLS without a client certificate, are refused with a reason.
  auto [plain, plain_out] =
      Cli({"health", "--server", planner, "--timeout", "3", "--data-dir", "/nonexistent"}, *dir_ + "/health-plain.log");
  EXPECT_EQ(plain, 1) << plain_out;
  EXPECT_EQ(plain_out.rfind("accelopt: error: " + planner + " health '': ", 0), 0u) << plain_out;
  auto [no_cert, no_cert_out] =
      Cli({"health", "--server", planner, "--timeout", "3", "--ca", Tls("ca.pem"), "--data-dir", "/nonexistent"},
          *dir_ + "/health-nocert.log");
  EXPECT_EQ(no_cert, 1) << no_cert_out;
  // A name the certificate does not carry fails verification.
  std::vector<std::string> wrong_name = {
      "health",     "--server",    planner, "--timeout", "3", "--tls-server-name", "elsewhere.example",
      "--data-dir", "/nonexistent"};
  wrong_name.insert(wrong_name.end(), tls.begin(), tls.end());
  auto [wrong, wrong_out] = Cli(wrong_name, *dir_ + "/health-name.log");
  EXPECT_EQ(wrong, 1) << wrong_out;
}

TEST_F(SecureClusterTest, StatusJsonListsEveryService) {
  auto [code, out] = Cli({"status", "--json", "--data-dir", *dir_}, *dir_ + "/status.log");
  EXPECT_EQ(code, 0) << out;
  // One line, keys sorted, with when it was checked and when each service started.
  EXPECT_EQ(out.rfind("{\"checked_at\":\"20", 0), 0u) << out;
  for (const char* name : {"orchestrator", "planner", "executor", "memory", "profiler-0"}) {
    EXPECT_NE(out.find(absl::StrCat("\"name\":\"", name, "\"")), std::string::npos) << out;
  }
  EXPECT_NE(out.find("\"secure\":true"), std::string::npos) << out;
  EXPECT_NE(out.find("\"started_at\":\"20"), std::string::npos) << out;
  EXPECT_NE(out.find("\"state\":\"SERVING\""), std::string::npos) << out;
}

}  // namespace
}  // namespace accelopt

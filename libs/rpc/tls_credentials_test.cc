#include "libs/rpc/tls_credentials.h"

#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "accelopt/v1/info_service.grpc.pb.h"
#include "libs/config/validate.h"
#include "libs/core/file.h"
#include "libs/rpc/server_runner.h"
#include "libs/security/pki.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::rpc {
namespace {

// A CA, a server certificate for 127.0.0.1 and a client certificate, written as PEM files in a temp dir.
class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = security::MakeCertificateAuthority("test CA", absl::Hours(1));
    ASSERT_TRUE(ca.ok());
    auto server = security::IssueCertificate(*ca, "profiler", {"localhost"}, {"127.0.0.1"}, absl::Hours(1));
    auto client = security::IssueCertificate(*ca, "orchestrator", {}, {}, absl::Hours(1));
    ASSERT_TRUE(server.ok() && client.ok());
    Write("ca.pem", ca->certificate);
    Write("server.pem", server->certificate);
    Write("server.key", server->private_key);
    Write("client.pem", client->certificate);
    Write("client.key", client->private_key);
  }

  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(core::WriteFileAtomic((dir_ / name).string(), text).ok());
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  v1::ServerConfig ServerConfig(bool mutual) const {
    v1::ServerConfig config;
    config::ApplyServerDefaults(&config);
    config.set_drain_seconds(0.1);
    config.mutable_tls()->set_cert_file(Path("server.pem"));
    config.mutable_tls()->set_key_file(Path("server.key"));
    if (mutual) {
      config.mutable_tls()->set_ca_file(Path("ca.pem"));
      config.mutable_tls()->set_require_client_cert(true);
    }
    return config;
  }

  static grpc::Status Call(const std::string& address, std::shared_ptr<grpc::ChannelCredentials> credentials) {
    auto stub = v1::InfoService::NewStub(grpc::CreateChannel(address, credentials));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::GetInfoResponse response;
    return stub->GetInfo(&context, v1::GetInfoRequest(), &response);
  }

  testing::ScratchDir scratch_;  // keys and certificates
  const std::filesystem::path dir_ = scratch_.path();
};

TEST_F(TlsTest, MutualTlsAcceptsOnlyClientsWithACertificateFromTheCa) {
  ServerRunner runner("profiler", ServerConfig(/*mutual=*/true), std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(runner.Start().ok());
  EXPECT_FALSE(Call(runner.grpc_address(), grpc::InsecureChannelCredentials()).ok()) << "plaintext must fail";

  v1::TlsConfig server_only;
  server_only.set_ca_file(Path("ca.pem"));
  auto no_client_cert = MakeChannelCredentials(server_only);
  ASSERT_TRUE(no_client_cert.ok());
  EXPECT_FALSE(Call(runner.grpc_address(), *no_client_cert).ok()) << "mTLS requires a client certificate";

  v1::TlsConfig mutual = server_only;
  mutual.set_cert_file(Path("client.pem"));
  mutual.set_key_file(Path("client.key"));
  auto with_cert = MakeChannelCredentials(mutual);
  ASSERT_TRUE(with_cert.ok());
  grpc::Status status = Call(runner.grpc_address(), *with_cert);
  EXPECT_TRUE(status.ok()) << status.error_message();
  runner.Shutdown();
}

TEST_F(TlsTest, ServerTlsWithoutClientCertificates) {
  ServerRunner runner("planner", ServerConfig(/*mutual=*/false), std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(runner.Start().ok());
  v1::TlsConfig trust;
  trust.set_ca_file(Path("ca.pem"));
  auto credentials = MakeChannelCredentials(trust);
  ASSERT_TRUE(credentials.ok());
  grpc::Status status = Call(runner.grpc_address(), *credentials);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(Call(runner.grpc_address(), grpc::InsecureChannelCredentials()).ok());
  runner.Shutdown();
}

TEST(TlsPolicyTest, NonLoopbackPlaintextNeedsAnExplicitInsecure) {
  v1::ServerConfig config;
  config::ApplyServerDefaults(&config);
  config.set_grpc_address("0.0.0.0:0");
  ServerRunner refused("memory", config, std::make_shared<prometheus::Registry>());
  absl::Status status = refused.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("server.insecure"), std::string::npos) << status;

  config.set_insecure(true);
  config.set_drain_seconds(0.1);
  ServerRunner allowed("memory", config, std::make_shared<prometheus::Registry>());
  EXPECT_TRUE(allowed.Start().ok());
  allowed.Shutdown();

  // The metrics listener too.
  config.set_insecure(false);
  config.set_grpc_address("127.0.0.1:0");
  config.set_admin_address("0.0.0.0:0");
  ServerRunner metrics_refused("memory", config, std::make_shared<prometheus::Registry>());
  absl::Status admin = metrics_refused.Start();
  EXPECT_EQ(admin.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(admin.message().rfind("server.admin_address 0.0.0.0:0 is not loopback", 0), 0u) << admin;
}

TEST(TlsPolicyTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:50051"));
  EXPECT_TRUE(IsLoopbackAddress("127.3.2.1:0"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:1"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:50051"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.5:50051"));
  EXPECT_FALSE(IsLoopbackAddress("orchestrator.accelopt.svc:50051"));
}

TEST(TlsPolicyTest, MissingFilesAreNamed) {
  v1::ServerConfig config;
  config.mutable_tls()->set_cert_file("/nonexistent/server.pem");
  config.mutable_tls()->set_key_file("/nonexistent/server.key");
  auto credentials = MakeServerCredentials(config);
  EXPECT_EQ(credentials.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(credentials.status().message().find("server.tls.cert_file"), std::string::npos);
  v1::ServerConfig half;
  half.mutable_tls()->set_ca_file("/x");
  EXPECT_EQ(MakeServerCredentials(half).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace accelopt::rpc

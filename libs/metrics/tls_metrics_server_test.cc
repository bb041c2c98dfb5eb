#include "libs/metrics/tls_metrics_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "libs/core/file.h"
#include "libs/metrics/metrics_exposer.h"
#include "libs/security/pki.h"
#include "libs/testing/child_process.h"
#include "libs/testing/http_get.h"
#include "libs/testing/scratch_dir.h"
#include "libs/testing/wait_until.h"
#include "prometheus/counter.h"

namespace accelopt::metrics {
namespace {

using namespace std::chrono_literals;

// Fetches a URL the way a scraper does, verifying the server against `ca_file` (Debian's python3 ssl module).
// "cert" instead of a path prints the PEM certificate the server presents.
std::string Fetch(const std::string& dir, int port, const std::string& what, const std::string& ca_file) {
  const std::string script =
      what == "cert" ? "import ssl,sys; print(ssl.get_server_certificate(('127.0.0.1', int(sys.argv[1]))))"
                     : "import ssl,sys,urllib.request\n"
                       "ctx = ssl.create_default_context(cafile=sys.argv[3])\n"
                       "print(urllib.request.urlopen('https://127.0.0.1:' + sys.argv[1] + sys.argv[2], context=ctx, "
                       "timeout=5).read().decode())";
  auto p = testing::ChildProcess::Start({"/usr/bin/python3", "-c", script, std::to_string(port), what, ca_file},
                                        dir + "/fetch.log");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  auto status = p->WaitForExit(20s);
  EXPECT_TRUE(status.has_value());
  return p->Output();
}

class TlsMetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = security::MakeCertificateAuthority("metrics-test-ca", absl::Hours(1));
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
    ASSERT_TRUE(core::WriteFileAtomic(dir_ + "/ca.pem", ca_.certificate).ok());
    WriteLeaf("planner");
    tls_.set_cert_file(dir_ + "/tls.crt");
    tls_.set_key_file(dir_ + "/tls.key");
    tls_.set_refresh_seconds(1);
  }

  // Issues a leaf for 127.0.0.1 and writes it as the served pair; returns its certificate.
  std::string WriteLeaf(const std::string& name) {
    auto leaf = security::IssueCertificate(ca_, name, {"localhost"}, {"127.0.0.1"}, absl::Hours(1));
    EXPECT_TRUE(leaf.ok()) << leaf.status();
    EXPECT_TRUE(core::WriteFileAtomic(dir_ + "/tls.key", leaf->private_key).ok());
    EXPECT_TRUE(core::WriteFileAtomic(dir_ + "/tls.crt", leaf->certificate).ok());
    return leaf->certificate;
  }

  testing::ScratchDir scratch_;  // keys and certificates
  const std::string dir_ = scratch_.path();
  security::PemPair ca_;
  v1::TlsConfig tls_;
};

TEST_F(TlsMetricsServerTest, ServesTheMetricsOverVerifiedTlsOnly) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("accelopt_test_scrapes_total").Help("test").Register(*registry).Add({}).Increment(3);
  auto exposer = MetricsExposer::Start("127.0.0.1:0", registry, &tls_);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  const int port = std::stoi((*exposer)->address().substr((*exposer)->address().rfind(':') + 1));
  std::string page = Fetch(dir_, port, "/metrics", dir_ + "/ca.pem");
  EXPECT_NE(page.find("accelopt_test_scrapes_total 3"), std::string::npos) << page;
  EXPECT_NE(Fetch(dir_, port, "/other", dir_ + "/ca.pem").find("404"), std::string::npos);
  // Plaintext gets no page.
  absl::StatusOr<std::string> plain = testing::HttpGet((*exposer)->address(), "/metrics", 2000);
  EXPECT_TRUE(!plain.ok() || plain->find("accelopt_test_scrapes_total") == std::string::npos);
}

TEST_F(TlsMetricsServerTest, ARotatedCertificateIsServedWithoutARestart) {
  auto server = TlsMetricsServer::Start("127.0.0.1:0", tls_);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  auto first = Fetch(dir_, port, "cert", "");
  WriteLeaf("planner-rotated");
  // The served certificate changes once the files are rechecked (every refresh_seconds).
  auto served_rotated = [&] {
    std::string served = Fetch(dir_, port, "cert", "");
    return !served.empty() && served != first && served.find("-----BEGIN CERTIFICATE-----") != std::string::npos;
  };
  EXPECT_TRUE(testing::WaitUntil(served_rotated, 20s).ok());
}

TEST_F(TlsMetricsServerTest, MaterialThatDoesNotLoadNamesTheField) {
  v1::TlsConfig bad = tls_;
  bad.set_key_file(dir_ + "/missing.key");
  auto server = TlsMetricsServer::Start("127.0.0.1:0", bad);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(server.status().message().rfind("server.tls.key_file: ", 0), 0u) << server.status();
}

}  // namespace
}  // namespace accelopt::metrics

#include "libs/security/pki.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

namespace accelopt::security {
namespace {

X509* ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

TEST(PkiTest, IssuedCertificatesVerifyAgainstTheirCaOnly) {
  auto ca = MakeCertificateAuthority("accelopt test CA", absl::Hours(1));
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto other_ca = MakeCertificateAuthority("someone else", absl::Hours(1));
  ASSERT_TRUE(other_ca.ok());
  auto leaf = IssueCertificate(*ca, "orchestrator", {"localhost"}, {"127.0.0.1"}, absl::Hours(1));
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  EXPECT_NE(leaf->private_key.find("BEGIN PRIVATE KEY"), std::string::npos);

  X509* ca_cert = ParseCert(ca->certificate);
  X509* other = ParseCert(other_ca->certificate);
  X509* cert = ParseCert(leaf->certificate);
  ASSERT_NE(cert, nullptr);
  auto verify_with = [&](X509* root) {
    X509_STORE* store = X509_STORE_new();
    X509_STORE_add_cert(store, root);
    X509_STORE_CTX* ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, cert, nullptr);
    int ok = X509_verify_cert(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return ok == 1;
  };
  EXPECT_TRUE(verify_with(ca_cert));
  EXPECT_FALSE(verify_with(other));
  char cn[64] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
  EXPECT_STREQ(cn, "orchestrator");
  X509_free(ca_cert);
  X509_free(other);
  X509_free(cert);
}

TEST(PkiTest, GarbageCaIsAnError) {
  auto leaf = IssueCertificate(PemPair{"not pem", "not pem"}, "x", {}, {}, absl::Hours(1));
  EXPECT_EQ(leaf.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace accelopt::security

#include "tests/llm_double/test_tls.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelopt::testing {
namespace {

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};

std::string BioToString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, n);
}

bool AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Deleter> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

}  // namespace

absl::StatusOr<TlsIdentity> MakeSelfSignedIdentity(const std::vector<std::string>& dns_names,
                                                   const std::vector<std::string>& ip_addresses) {
  std::unique_ptr<EVP_PKEY, Deleter> key(EVP_EC_gen("P-256"));
  if (key == nullptr) return absl::InternalError("cannot generate an EC key");
  std::unique_ptr<X509, Deleter> cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("llm-double"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  std::vector<std::string> alt;
  for (const std::string& d : dns_names) alt.push_back(absl::StrCat("DNS:", d));
  for (const std::string& ip : ip_addresses) alt.push_back(absl::StrCat("IP:", ip));
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_subject_alt_name, absl::StrJoin(alt, ",")) ||
      !AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign")) {
    return absl::InternalError("cannot add certificate extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return absl::InternalError("cannot sign certificate");
  std::unique_ptr<BIO, Deleter> cert_bio(BIO_new(BIO_s_mem()));
  std::unique_ptr<BIO, Deleter> key_bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return TlsIdentity{BioToString(cert_bio.get()), BioToString(key_bio.get())};
}

}  // namespace accelopt::testing

#include "libs/security/pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelopt::security {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

Cert NewCertificate(EVP_PKEY* key, const std::string& common_name, absl::Duration validity) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), absl::ToInt64Seconds(validity));
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  return cert;
}

absl::StatusOr<PemPair> ToPem(X509* cert, EVP_PKEY* key) {
  std::unique_ptr<BIO, Free> cert_bio(BIO_new(BIO_s_mem())), key_bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cert_bio.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return absl::InternalError("cannot encode the certificate or key as PEM");
  }
  auto read = [](BIO* bio) {
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<size_t>(size));
  };
  return PemPair{read(cert_bio.get()), read(key_bio.get())};
}

absl::StatusOr<std::pair<Cert, Key>> Parse(const PemPair& pem) {
  std::unique_ptr<BIO, Free> cert_bio(
      BIO_new_mem_buf(pem.certificate.data(), static_cast<int>(pem.certificate.size())));
  std::unique_ptr<BIO, Free> key_bio(BIO_new_mem_buf(pem.private_key.data(), static_cast<int>(pem.private_key.size())));
  Cert cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr || key == nullptr) return absl::InvalidArgumentError("the CA certificate or key is not PEM");
  return std::make_pair(std::move(cert), std::move(key));
}

}  // namespace

absl::StatusOr<PemPair> MakeCertificateAuthority(const std::string& common_name, absl::Duration validity) {
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return absl::InternalError("cannot generate a P-256 key");
  Cert cert = NewCertificate(key.get(), common_name, validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash")) {
    return absl::InternalError("cannot add the CA extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return absl::InternalError("cannot sign the CA");
  return ToPem(cert.get(), key.get());
}

absl::StatusOr<PemPair> IssueCertificate(const PemPair& ca, const std::string& common_name,
                                         const std::vector<std::string>& dns_names,
                                         const std::vector<std::string>& ip_addresses, absl::Duration validity) {
  auto parsed = Parse(ca);
  if (!parsed.ok()) return parsed.status();
  auto& [ca_cert, ca_key] = *parsed;
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return absl::InternalError("cannot generate a P-256 key");
  Cert cert = NewCertificate(key.get(), common_name, validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  std::vector<std::string> names;
  for (const auto& d : dns_names) names.push_back("DNS:" + d);
  for (const auto& ip : ip_addresses) names.push_back("IP:" + ip);
  if (!AddExtension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !AddExtension(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth") ||
      (!names.empty() && !AddExtension(cert.get(), ca_cert.get(), NID_subject_alt_name, absl::StrJoin(names, ",")))) {
    return absl::InternalError(absl::StrCat("cannot add the extensions of '", common_name, "'"));
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return absl::InternalError(absl::StrCat("cannot sign the certificate of '", common_name, "'"));
  }
  return ToPem(cert.get(), key.get());
}

}  // namespace accelopt::security

// A small certificate authority for clusters that bring none (`accelopt up --secure`, tests): ECDSA P-256
// keys, SHA-256 signatures, PEM output.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace accelopt::security {

struct PemPair {
  std::string certificate;  // PEM
  std::string private_key;  // PEM (PKCS#8)
};

// A self-signed CA certificate with basicConstraints CA:TRUE and keyCertSign.
absl::StatusOr<PemPair> MakeCertificateAuthority(const std::string& common_name, absl::Duration validity);

// A leaf certificate signed by `ca`, usable for both TLS server and client authentication, whose subject CN
// is `common_name` (the identity services check) and whose subjectAltName lists `dns_names` and `ip_addresses`.
absl::StatusOr<PemPair> IssueCertificate(const PemPair& ca, const std::string& common_name,
                                         const std::vector<std::string>& dns_names,
                                         const std::vector<std::string>& ip_addresses, absl::Duration validity);

}  // namespace accelopt::security

// Self-signed TLS identities generated at test time (OpenSSL), for HTTPS tests of the LLM client.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::testing {

// An ECDSA P-256 key and a self-signed certificate valid for one day, whose subjectAltName lists `dns_names`
// and `ip_addresses`. The certificate is its own CA (basicConstraints CA:TRUE), so it can be a ca_file.
absl::StatusOr<TlsIdentity> MakeSelfSignedIdentity(const std::vector<std::string>& dns_names,
                                                   const std::vector<std::string>& ip_addresses);

}  // namespace accelopt::testing

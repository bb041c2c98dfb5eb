// An OpenAI-compatible Chat Completions server for tests: answers from a DoubleScript, misbehaves on request,
// records every request. Plain HTTP or HTTPS; in-process (gtest) or standalone (accelopt-llm-double).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "accelopt/v1/config.pb.h"
#include "tests/llm_double/double_script.h"

namespace accelopt::testing {

// One request as the double received it.
struct RecordedRequest {
  std::string method;
  // As sent: origin-form ("/v1/chat/completions") or absolute-form through an HTTP proxy.
  std::string target;
  // Header names in lower case.
  std::map<std::string, std::string> headers;
  std::string body;
  // Parsed from the body when it is a chat request.
  std::string model;
  std::string system;
  std::string user;
  std::optional<int64_t> seed;
  // When the request had been read completely, on the steady clock.
  absl::Time received;
  // 0-based arrival number.
  int index = 0;
};

// PEM certificate chain and private key for HTTPS.
struct TlsIdentity {
  std::string cert_pem;
  std::string key_pem;
};

// Serves POST .../chat/completions from the script, plus control endpoints for out-of-process tests:
// GET /_double/requests (the records as JSON), GET /_double/stats ({"requests", "max_in_flight", "connections"}),
// PUT /_double/script (replace the script). Thread-safe.
class LlmDouble {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    // 0 picks a free port.
    int port = 0;
    // HTTPS with this identity when set.
    std::optional<TlsIdentity> tls;
    int threads = 1;
    // Closes a kept-alive connection that stays idle this long (as servers' keep-alive timeouts do); zero
    // keeps it open.
    absl::Duration idle_close = absl::ZeroDuration();
  };

  // UNAVAILABLE when the address cannot be bound; INVALID_ARGUMENT for a bad TLS identity.
  static absl::StatusOr<std::unique_ptr<LlmDouble>> Start(DoubleScript script, Options options);
  // Stops serving; hung requests are dropped.
  ~LlmDouble();

  int port() const { return port_; }
  // e.g. "http://127.0.0.1:4321/v1" (https when serving TLS).
  std::string base_url() const;
  // An agent service's llm.endpoints entry for this double: `name`, base_url(), serving `models` (unpriced).
  v1::LlmEndpoint Endpoint(const std::vector<std::string>& models, const std::string& name = "double") const;

  void SetScript(DoubleScript script);
  std::vector<RecordedRequest> Requests() const;
  int request_count() const;
  // Most chat requests being handled at the same moment.
  int max_in_flight() const;
  // Connections accepted so far, and those still open.
  int connections_accepted() const;
  int connections_open() const;
  // Polls until at most `n` connections are open; false if `timeout` passes first.
  bool WaitForOpenConnectionsAtMost(int n, absl::Duration timeout) const;
  // Polls until at least `n` chat requests arrived; false if `timeout` passes first.
  bool WaitForRequests(int n, absl::Duration timeout) const;

  // Implementation detail shared with the connection handlers.
  class Impl;

 private:
  explicit LlmDouble(std::unique_ptr<Impl> impl, int port, bool tls);
  std::unique_ptr<Impl> impl_;
  int port_;
  bool tls_;
};

}  // namespace accelopt::testing

// The audit log: one JSON line per security-relevant action (submit, cancel, import, export, authentication
// failure, ...), with the principal, the target and the outcome, on its own sink, apart from the service log:
//
//   {"ts":"2026-11-24T20:31:02.120Z","service":"orchestrator","action":"cancel","tenant":"team-a",
//    "role":"submitter","principal":"token:1a2b3c4d","target":"job/j-42","outcome":"PERMISSION_DENIED",
//    "detail":"..."}
//
// Thread-safe. Never records secrets: principals appear as their tenant, role and token-hash prefix.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "libs/security/principal.h"

namespace accelopt::security {

class AuditLog {
 public:
  // `path` is a file (appended to, created 0600) or "-"/empty for stdout.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const std::string& path, std::string service);
  ~AuditLog();

  // `principal` may be null (the caller could not be authenticated). `outcome` is the status of the action.
  void Record(absl::string_view action, const Principal* principal, absl::string_view target,
              const absl::Status& outcome, absl::string_view detail = "");

 private:
  AuditLog(std::FILE* file, bool owned, std::string service)
      : file_(file), owned_(owned), service_(std::move(service)) {}

  absl::Mutex mu_;
  std::FILE* file_ ABSL_GUARDED_BY(mu_);
  const bool owned_;
  const std::string service_;
};

}  // namespace accelopt::security

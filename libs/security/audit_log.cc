#include "libs/security/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libs/core/bounded_text.h"
#include "nlohmann/json.hpp"

namespace accelopt::security {
namespace {

// Bytes kept of each field a caller chooses (target, error, detail).
constexpr size_t kMaxFieldBytes = 512;

}  // namespace

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path, std::string service) {
  if (path.empty() || path == "-") return std::unique_ptr<AuditLog>(new AuditLog(stdout, false, std::move(service)));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("auth.audit_file: cannot open '", path, "': ", std::strerror(errno)));
  }
  std::FILE* file = fdopen(fd, "a");
  return std::unique_ptr<AuditLog>(new AuditLog(file, true, std::move(service)));
}

AuditLog::~AuditLog() {
  absl::MutexLock lock(&mu_);
  if (owned_) std::fclose(file_);
}

void AuditLog::Record(absl::string_view action, const Principal* principal, absl::string_view target,
                      const absl::Status& outcome, absl::string_view detail) {
  nlohmann::ordered_json line;
  line["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  line["service"] = service_;
  line["action"] = std::string(action);
  if (principal != nullptr) {
    line["tenant"] = principal->tenant;
    line["role"] = RoleName(principal->role);
    line["principal"] = principal->source;
  } else {
    line["principal"] = "unauthenticated";
  }
  // A caller chooses targets (job ids, namespaces) and much of the errors' text: each field is bounded, so that an
  // unauthenticated 16 MiB job id adds a line, not 16 MiB, to the log.
  line["target"] = core::BoundedText(target, kMaxFieldBytes);
  line["outcome"] = outcome.ok() ? "OK" : absl::StatusCodeToString(outcome.code());
  if (!outcome.ok()) line["error"] = core::BoundedText(outcome.message(), kMaxFieldBytes);
  if (!detail.empty()) line["detail"] = core::BoundedText(detail, kMaxFieldBytes);
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  absl::MutexLock lock(&mu_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

}  // namespace accelopt::security

// JSON-lines logger: one object per event on stderr with ts, level, service, component and msg.
//
//   ACCELOPT_LOG(INFO) << "listening on " << address;
//   ACCELOPT_LOG(WARNING).With("job_id", id) << "budget exhausted";
//
// Thread-safe. Messages below the configured level cost one comparison.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace accelopt::core {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Sets the process-wide service name written in every line (call once from main).
void SetLogService(absl::string_view service);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Parses "debug", "info", "warning" or "error".
absl::Status SetLogLevelFromString(absl::string_view level);
// Routes gRPC's own log output into this logger.
void RouteGrpcLogs();
// Escapes `s` for inclusion inside a JSON string literal (without the quotes).
std::string JsonEscape(absl::string_view s);

// One log event, written when destroyed.
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;

  // Adds a structured field.
  LogMessage& With(absl::string_view key, absl::string_view value);
  template <typename T>
  LogMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  LogLevel level_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace accelopt::core

#define ACCELOPT_LOG_LEVEL_DEBUG ::accelopt::core::LogLevel::kDebug
#define ACCELOPT_LOG_LEVEL_INFO ::accelopt::core::LogLevel::kInfo
#define ACCELOPT_LOG_LEVEL_WARNING ::accelopt::core::LogLevel::kWarning
#define ACCELOPT_LOG_LEVEL_ERROR ::accelopt::core::LogLevel::kError

#define ACCELOPT_LOG(severity)                                           \
  if (ACCELOPT_LOG_LEVEL_##severity < ::accelopt::core::GetLogLevel()) { \
  } else                                                                 \
    ::accelopt::core::LogMessage(ACCELOPT_LOG_LEVEL_##severity, __FILE__, __LINE__)

#include "libs/core/log.h"

#include <grpc/support/log.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace accelopt::core {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_mu;
std::string& ServiceName() {
  static auto* name = new std::string("accelopt");
  return *name;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

// The component is the file's directory and base name, e.g. "libs/rpc/server_runner".
absl::string_view Component(const char* file) {
  absl::string_view f(file);
  for (absl::string_view root : {"/libs/", "/services/", "/cli/", "/tests/"}) {
    if (auto pos = f.rfind(root); pos != absl::string_view::npos) {
      f.remove_prefix(pos + 1);
      break;
    }
  }
  if (auto dot = f.rfind('.'); dot != absl::string_view::npos) f = f.substr(0, dot);
  return f;
}

void GrpcLogSink(gpr_log_func_args* args) {
  LogLevel level = args->severity == GPR_LOG_SEVERITY_ERROR  ? LogLevel::kError
                   : args->severity == GPR_LOG_SEVERITY_INFO ? LogLevel::kInfo
                                                             : LogLevel::kDebug;
  if (level < GetLogLevel()) return;
  LogMessage(level, args->file, args->line).With("origin", "grpc") << args->message;
}

}  // namespace

void SetLogService(absl::string_view service) {
  std::lock_guard<std::mutex> lock(g_mu);
  ServiceName() = std::string(service);
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

absl::Status SetLogLevelFromString(absl::string_view level) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError}) {
    if (level == LevelName(l)) {
      SetLogLevel(l);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("log level '", level, "' is not one of debug, info, warning, error"));
}

void RouteGrpcLogs() { gpr_set_log_function(GrpcLogSink); }

std::string JsonEscape(absl::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level), file_(file), line_(line) {}

LogMessage& LogMessage::With(absl::string_view key, absl::string_view value) {
  fields_.emplace_back(std::string(key), std::string(value));
  return *this;
}

LogMessage::~LogMessage() {
  std::string line =
      absl::StrCat("{\"ts\":\"", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                   "\",\"level\":\"", LevelName(level_), "\",\"service\":\"");
  {
    std::lock_guard<std::mutex> lock(g_mu);
    absl::StrAppend(&line, JsonEscape(ServiceName()));
  }
  absl::StrAppend(&line, "\",\"component\":\"", JsonEscape(Component(file_)), ":", line_, "\",\"msg\":\"",
                  JsonEscape(stream_.str()), "\"");
  for (const auto& [key, value] : fields_) {
    absl::StrAppend(&line, ",\"", JsonEscape(key), "\":\"", JsonEscape(value), "\"");
  }
  line += "}\n";
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace accelopt::core

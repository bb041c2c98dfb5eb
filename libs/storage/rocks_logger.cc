#include "libs/storage/rocks_logger.h"

#include <cstdarg>
#include <cstdio>

#include "libs/core/log.h"

namespace accelopt::storage {
namespace {

class ServiceLogLogger final : public rocksdb::Logger {
 public:
  explicit ServiceLogLogger(std::string path)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), path_(std::move(path)) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap); }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    char buffer[1024];
    va_list copy;
    va_copy(copy, ap);
    std::vsnprintf(buffer, sizeof(buffer), format, copy);
    va_end(copy);
    if (level >= rocksdb::InfoLogLevel::ERROR_LEVEL) {
      ACCELOPT_LOG(ERROR).With("component", "rocksdb").With("store", path_) << buffer;
    } else {
      ACCELOPT_LOG(WARNING).With("component", "rocksdb").With("store", path_) << buffer;
    }
  }

 private:
  const std::string path_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> MakeServiceLogLogger(std::string path) {
  return std::make_shared<ServiceLogLogger>(std::move(path));
}

}  // namespace accelopt::storage

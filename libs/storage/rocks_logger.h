// RocksDB's info log routed into the service log (warnings and worse) instead of a LOG file in the data
// directory. A LOG file on a full disk is what made librocksdb 7.8 abort: its writer asserts on the write
// after a failed one (WritableFileWriter::AssertFalseAndGetStatusForPrevError).
#pragma once

#include <rocksdb/env.h>

#include <memory>
#include <string>

namespace accelopt::storage {

// A logger for DBOptions::info_log; `path` names the store in each line.
std::shared_ptr<rocksdb::Logger> MakeServiceLogLogger(std::string path);

}  // namespace accelopt::storage

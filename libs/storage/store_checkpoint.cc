#include "libs/storage/store_checkpoint.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

namespace accelopt::storage {

absl::Status CheckpointStore(const std::string& store_path, const std::string& dest) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(store_path) / "CURRENT", ec)) {
    return absl::NotFoundError(absl::StrCat("checkpoint: no store in '", store_path, "'"));
  }
  if (std::filesystem::exists(dest, ec)) {
    return absl::AlreadyExistsError(absl::StrCat("checkpoint: '", dest, "' already exists"));
  }
  rocksdb::Options options;
  std::vector<std::string> names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, store_path, &names);
  if (!s.ok()) return absl::InternalError(absl::StrCat("checkpoint: cannot list the column families: ", s.ToString()));
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::OpenForReadOnly(options, store_path, families, &handles, &raw);
  if (!s.ok())
    return absl::UnavailableError(absl::StrCat("checkpoint: cannot open '", store_path, "': ", s.ToString()));
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::Checkpoint* raw_checkpoint = nullptr;
  s = rocksdb::Checkpoint::Create(db.get(), &raw_checkpoint);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw_checkpoint);
  if (s.ok()) s = checkpoint->CreateCheckpoint(dest);
  for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h);
  if (!s.ok()) {
    return absl::InternalError(absl::StrCat("checkpoint: cannot write '", dest, "': ", s.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace accelopt::storage

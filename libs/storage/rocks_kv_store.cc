#include "libs/storage/rocks_kv_store.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace accelopt::storage {
namespace {

absl::Status FromRocksStatus(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(context, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsIOError()) return absl::UnavailableError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsBusy() || s.IsTryAgain()) return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}

}  // namespace

struct RocksKvStore::Impl {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::map<std::string, rocksdb::ColumnFamilyHandle*, std::less<>> by_name;
  rocksdb::WriteOptions write_options;
  std::string path;

  ~Impl() {
    for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
    if (db) (void)db->Close();
  }

  absl::StatusOr<rocksdb::ColumnFamilyHandle*> Family(absl::string_view name) const {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown column family '", name, "'"));
    }
    return it->second;
  }
};

RocksKvStore::RocksKvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksKvStore::~RocksKvStore() = default;

absl::StatusOr<std::unique_ptr<KvStore>> KvStore::Open(const std::string& path,
                                                       const std::vector<std::string>& families) {
  auto store = RocksKvStore::Open(path, families);
  if (!store.ok()) return store.status();
  return std::unique_ptr<KvStore>(*std::move(store));
}

absl::StatusOr<std::unique_ptr<RocksKvStore>> RocksKvStore::Open(const std::string& path,
                                                                 const std::vector<std::string>& families) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", ec.message()));
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.max_background_jobs = 2;
  options.keep_log_file_num = 3;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  for (const auto& f : families) {
    if (f != rocksdb::kDefaultColumnFamilyName) descriptors.emplace_back(f, rocksdb::ColumnFamilyOptions());
  }
  // Families created by a newer version must be opened too, or RocksDB refuses to open the store.
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(options, path, &existing).ok()) {
    for (const auto& f : existing) {
      bool known = false;
      for (const auto& d : descriptors) known = known || d.name == f;
      if (!known) descriptors.emplace_back(f, rocksdb::ColumnFamilyOptions());
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->write_options.sync = true;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, descriptors, &impl->handles, &db);
  if (!s.ok()) return FromRocksStatus(s, absl::StrCat("cannot open store ", path));
  impl->db.reset(db);
  for (size_t i = 0; i < descriptors.size(); ++i) impl->by_name[descriptors[i].name] = impl->handles[i];
  return std::unique_ptr<RocksKvStore>(new RocksKvStore(std::move(impl)));
}

absl::StatusOr<std::string> RocksKvStore::Get(absl::string_view family, absl::string_view key) const {
  auto cf = impl_->Family(family);
  if (!cf.ok()) return cf.status();
  std::string value;
  rocksdb::Status s = impl_->db->Get(rocksdb::ReadOptions(), *cf, rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no key '", key, "' in ", family));
  if (!s.ok()) return FromRocksStatus(s, absl::StrCat("get ", family, "/", key));
  return value;
}

absl::Status RocksKvStore::Write(WriteBatch batch) {
  rocksdb::WriteBatch wb;
  for (const auto& op : batch.ops()) {
    auto cf = impl_->Family(op.family);
    if (!cf.ok()) return cf.status();
    rocksdb::Status s = op.is_delete ? wb.Delete(*cf, op.key) : wb.Put(*cf, op.key, op.value);
    if (!s.ok()) return FromRocksStatus(s, "batch");
  }
  return FromRocksStatus(impl_->db->Write(impl_->write_options, &wb), absl::StrCat("write to ", impl_->path));
}

absl::Status RocksKvStore::Scan(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const {
  auto cf = impl_->Family(family);
  if (!cf.ok()) return cf.status();
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions(), *cf));
  rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
    if (!fn(absl::string_view(it->key().data(), it->key().size()),
            absl::string_view(it->value().data(), it->value().size())))
      break;
  }
  return FromRocksStatus(it->status(), absl::StrCat("scan ", family));
}

absl::Status RocksKvStore::ScanReverse(absl::string_view family, absl::string_view prefix, const ScanFn& fn) const {
  auto cf = impl_->Family(family);
  if (!cf.ok()) return cf.status();
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions(), *cf));
  rocksdb::Slice p(prefix.data(), prefix.size());
  // Position after the last key with the prefix: the prefix followed by 0xff bytes.
  std::string upper = std::string(prefix) + std::string(8, '\xff');
  it->SeekForPrev(upper);
  for (; it->Valid() && it->key().starts_with(p); it->Prev()) {
    if (!fn(absl::string_view(it->key().data(), it->key().size()),
            absl::string_view(it->value().data(), it->value().size())))
      break;
  }
  return FromRocksStatus(it->status(), absl::StrCat("scan ", family));
}

}  // namespace accelopt::storage

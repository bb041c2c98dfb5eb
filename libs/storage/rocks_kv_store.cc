#include "libs/storage/rocks_kv_store.h"

#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "libs/storage/disk_space.h"
#include "libs/storage/rocks_logger.h"
#include "libs/storage/store_health.h"

namespace accelopt::storage {
namespace {

absl::Status FromRocksStatus(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(context, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(absl::StrCat("disk full: ", msg));
  if (s.IsIOError()) return absl::UnavailableError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsBusy() || s.IsTryAgain()) return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}

// Table files flushed from one memtable stay small, so the reserve covers a flush and an L0 compaction.
constexpr size_t kWriteBufferBytes = 2 << 20;

rocksdb::ColumnFamilyOptions FamilyOptions() {
  rocksdb::ColumnFamilyOptions options;
  options.write_buffer_size = kWriteBufferBytes;
  return options;
}

// Records the background errors RocksDB stops on (e.g. ENOSPC while flushing) and its own recoveries.
// Called with RocksDB's mutex held: it only updates StoreHealth.
class ErrorListener final : public rocksdb::EventListener {
 public:
  ErrorListener(StoreHealth* health, std::string path) : health_(health), path_(std::move(path)) {}

  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) override {
    if (error == nullptr || error->ok()) return;
    if (error->IsCorruption()) {
      health_->SetCorrupt(FromRocksStatus(*error, absl::StrCat("store at ", path_, " is corrupt")));
    } else {
      health_->SetStopped(FromRocksStatus(*error, absl::StrCat("store at ", path_, " stopped writing")));
    }
  }
  void OnErrorRecoveryCompleted(rocksdb::Status) override { health_->Resumed(); }

 private:
  StoreHealth* const health_;
  const std::string path_;
};

}  // namespace

struct RocksKvStore::Impl {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::map<std::string, rocksdb::ColumnFamilyHandle*, std::less<>> by_name;
  rocksdb::WriteOptions write_options;
  std::string path;
  RocksKvStoreOptions options;
  StoreHealth health;

  absl::Mutex probe_mu;
  bool stopping ABSL_GUARDED_BY(probe_mu) = false;
  std::thread probe;

  ~Impl() {
    {
      absl::MutexLock lock(&probe_mu);
      stopping = true;
    }
    if (probe.joinable()) probe.join();
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

  // Converts a RocksDB error of a read or write, remembering what it says about the store's health.
  absl::Status Record(const rocksdb::Status& s, absl::string_view context) {
    absl::Status status = FromRocksStatus(s, context);
    if (s.IsCorruption())
      health.SetCorrupt(absl::DataLossError(absl::StrCat("store at ", path, " is corrupt: ", s.ToString())));
    if (s.IsIOError()) health.SetStopped(status);
    return status;
  }

  // Until the store closes: checks free space, resumes a stopped database once there is room again, and
  // verifies checksums every verify_interval.
  void ProbeLoop() {
    absl::Time next_verify = absl::Now() + options.verify_interval;
    while (true) {
      {
        absl::MutexLock lock(&probe_mu);
        if (probe_mu.AwaitWithTimeout(absl::Condition(&stopping), options.probe_interval)) return;
      }
      absl::Status disk = CheckFreeSpace(path, options.reserve_bytes);
      health.SetDisk(disk);
      if (health.stopped() && disk.ok()) {
        rocksdb::Status resumed = db->Resume();
        if (resumed.ok()) health.Resumed();
      }
      if (options.verify_interval > absl::ZeroDuration() && absl::Now() >= next_verify) {
        rocksdb::Status verified = db->VerifyChecksum();
        if (verified.IsCorruption()) (void)Record(verified, "verify checksums");
        next_verify = absl::Now() + options.verify_interval;
      }
    }
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
                                                                 const std::vector<std::string>& families,
                                                                 RocksKvStoreOptions store_options) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", ec.message()));
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = store_options;
  impl->write_options.sync = true;

  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.max_background_jobs = 2;
  options.keep_log_file_num = 3;
  // Corrupt data and failed writes surface as statuses (and stop writes) rather than being skipped.
  options.paranoid_checks = true;
  // No LOG file on the data disk: its writer aborts the process on the write after an ENOSPC.
  options.info_log = MakeServiceLogLogger(path);
  options.listeners.push_back(std::make_shared<ErrorListener>(&impl->health, path));
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, FamilyOptions());
  for (const auto& f : families) {
    if (f != rocksdb::kDefaultColumnFamilyName) descriptors.emplace_back(f, FamilyOptions());
  }
  // Families created by a newer version must be opened too, or RocksDB refuses to open the store.
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(options, path, &existing).ok()) {
    for (const auto& f : existing) {
      bool known = false;
      for (const auto& d : descriptors) known = known || d.name == f;
      if (!known) descriptors.emplace_back(f, FamilyOptions());
    }
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, descriptors, &impl->handles, &db);
  if (!s.ok()) return FromRocksStatus(s, absl::StrCat("cannot open store ", path));
  impl->db.reset(db);
  for (size_t i = 0; i < descriptors.size(); ++i) impl->by_name[descriptors[i].name] = impl->handles[i];
  impl->health.SetDisk(CheckFreeSpace(path, store_options.reserve_bytes));
  Impl* raw = impl.get();
  impl->probe = std::thread([raw] { raw->ProbeLoop(); });
  return std::unique_ptr<RocksKvStore>(new RocksKvStore(std::move(impl)));
}

absl::StatusOr<std::string> RocksKvStore::Get(absl::string_view family, absl::string_view key) const {
  auto cf = impl_->Family(family);
  if (!cf.ok()) return cf.status();
  std::string value;
  rocksdb::Status s = impl_->db->Get(rocksdb::ReadOptions(), *cf, rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no key '", key, "' in ", family));
  if (!s.ok()) return impl_->Record(s, absl::StrCat("get ", family, "/", key));
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
  // Refused before RocksDB sees it, so that its flushes and compactions never run out of space.
  if (absl::Status disk = CheckFreeSpace(impl_->path, impl_->options.reserve_bytes); !disk.ok()) {
    impl_->health.SetDisk(disk);
    return disk;
  }
  rocksdb::Status s = impl_->db->Write(impl_->write_options, &wb);
  if (!s.ok()) return impl_->Record(s, absl::StrCat("write to ", impl_->path));
  return absl::OkStatus();
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
  if (!it->status().ok()) return impl_->Record(it->status(), absl::StrCat("scan ", family));
  return absl::OkStatus();
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
  if (!it->status().ok()) return impl_->Record(it->status(), absl::StrCat("scan ", family));
  return absl::OkStatus();
}

absl::Status RocksKvStore::Health() const { return impl_->health.Get(); }

}  // namespace accelopt::storage

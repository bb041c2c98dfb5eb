#include "libs/storage/kv_store.h"

namespace accelopt::storage {

WriteBatch::WriteBatch() = default;
WriteBatch::~WriteBatch() = default;
WriteBatch::WriteBatch(WriteBatch&&) noexcept = default;
WriteBatch& WriteBatch::operator=(WriteBatch&&) noexcept = default;

void WriteBatch::Put(absl::string_view family, absl::string_view key, absl::string_view value) {
  ops_.push_back({std::string(family), std::string(key), std::string(value), false});
}
void WriteBatch::Delete(absl::string_view family, absl::string_view key) {
  ops_.push_back({std::string(family), std::string(key), "", true});
}
bool WriteBatch::empty() const { return ops_.empty(); }

absl::Status KvStore::Put(absl::string_view family, absl::string_view key, absl::string_view value) {
  WriteBatch batch;
  batch.Put(family, key, value);
  return Write(std::move(batch));
}

absl::Status KvStore::Delete(absl::string_view family, absl::string_view key) {
  WriteBatch batch;
  batch.Delete(family, key);
  return Write(std::move(batch));
}

}  // namespace accelopt::storage

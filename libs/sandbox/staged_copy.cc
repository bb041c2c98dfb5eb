#include "libs/sandbox/staged_copy.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr char kPrefix[] = "accelopt-staged-";

absl::Status CopyTree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directory(to, ec);
  if (ec || chmod(to.c_str(), 0755) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot create ", to.string(), ": ", ec.message()));
  }
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.front() == '.') continue;  // tool caches (.mypy_cache), VCS and editor files
    const fs::path target = to / name;
    auto status = entry.symlink_status(ec);
    if (ec) break;
    if (fs::is_directory(status)) {
      if (name == "__pycache__") continue;
      if (auto s = CopyTree(entry.path(), target); !s.ok()) return s;
    } else if (fs::is_regular_file(status)) {
      fs::copy_file(entry.path(), target, fs::copy_options::overwrite_existing, ec);
      if (ec) return absl::UnavailableError(absl::StrCat("cannot copy ", entry.path().string(), ": ", ec.message()));
      const bool executable = (status.permissions() & fs::perms::owner_exec) != fs::perms::none;
      if (chmod(target.c_str(), executable ? 0755 : 0644) != 0) {
        return absl::UnavailableError(absl::StrCat("cannot chmod ", target.string(), ": ", std::strerror(errno)));
      }
    }
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot read ", from.string(), ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StagedCopy> StagedCopy::Create(const std::string& source, const std::string& root) {
  auto dir = LockedDir::Create(root, kPrefix, 0755);
  if (!dir.ok()) return dir.status();
  if (auto s = CopyTree(source, dir->path()); !s.ok()) return s;
  return StagedCopy(*std::move(dir));
}

}  // namespace accelopt::sandbox

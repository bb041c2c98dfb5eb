#include "libs/sandbox/staged_copy.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>

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

// Removes copies whose lock no process holds, left by a worker that was killed.
void RemoveStaleCopies(const std::string& root) {
  std::error_code ec;
  const auto old_enough = fs::file_time_type::clock::now() - std::chrono::minutes(1);
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || entry.path().extension() != ".lock") continue;
    if (fs::last_write_time(entry.path(), ec) > old_enough || ec) continue;
    int fd = open(entry.path().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fs::path copy = entry.path();
      fs::remove_all(copy.replace_extension(), ec);
      unlink(entry.path().c_str());
    }
    close(fd);
  }
}

}  // namespace

absl::StatusOr<StagedCopy> StagedCopy::Create(const std::string& source, const std::string& root) {
  RemoveStaleCopies(root);
  std::string tmpl = absl::StrCat(root, "/", kPrefix, "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a directory in ", root, ": ", std::strerror(errno)));
  }
  const std::string lock_path = tmpl + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    lock_fd = -1;
  }
  StagedCopy copy(tmpl, lock_fd);  // removes the directory again on failure
  if (lock_fd < 0) return absl::UnavailableError(absl::StrCat("cannot lock ", lock_path, ": ", std::strerror(errno)));
  if (auto s = CopyTree(source, tmpl); !s.ok()) return s;
  return copy;
}

StagedCopy::StagedCopy(StagedCopy&& other) noexcept
    : path_(std::exchange(other.path_, "")), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

StagedCopy& StagedCopy::operator=(StagedCopy&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::exchange(other.path_, "");
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

StagedCopy::~StagedCopy() { Release(); }

void StagedCopy::Release() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  unlink((path_ + ".lock").c_str());
  if (lock_fd_ >= 0) close(lock_fd_);
  path_.clear();
  lock_fd_ = -1;
}

}  // namespace accelopt::sandbox

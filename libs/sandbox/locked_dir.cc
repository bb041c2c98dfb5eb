#include "libs/sandbox/locked_dir.h"

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

// Removes directories whose lock no process holds, left by a worker that was killed. A lock younger than a minute
// may belong to a process between creating it and locking it.
void RemoveStale(const std::string& root, const std::string& prefix) {
  std::error_code ec;
  const auto old_enough = fs::file_time_type::clock::now() - std::chrono::minutes(1);
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || entry.path().extension() != ".lock") continue;
    std::error_code time_ec;
    if (fs::last_write_time(entry.path(), time_ec) > old_enough || time_ec) continue;
    int fd = open(entry.path().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fs::path dir = entry.path();
      std::error_code remove_ec;
      fs::remove_all(dir.replace_extension(), remove_ec);
      unlink(entry.path().c_str());
    }
    close(fd);
  }
}

}  // namespace

absl::StatusOr<LockedDir> LockedDir::Create(const std::string& root, const std::string& prefix, unsigned mode) {
  RemoveStale(root, prefix);
  std::string tmpl = absl::StrCat(root, "/", prefix, "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a directory in ", root, ": ", std::strerror(errno)));
  }
  const std::string lock_path = tmpl + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    lock_fd = -1;
  }
  LockedDir dir(tmpl, lock_fd);  // removes the directory again on failure
  if (lock_fd < 0) return absl::UnavailableError(absl::StrCat("cannot lock ", lock_path, ": ", std::strerror(errno)));
  if (chmod(tmpl.c_str(), mode) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot chmod ", tmpl, ": ", std::strerror(errno)));
  }
  return dir;
}

LockedDir::LockedDir(LockedDir&& other) noexcept
    : path_(std::exchange(other.path_, "")), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

LockedDir& LockedDir::operator=(LockedDir&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::exchange(other.path_, "");
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

LockedDir::~LockedDir() { Release(); }

void LockedDir::Release() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  unlink((path_ + ".lock").c_str());
  if (lock_fd_ >= 0) close(lock_fd_);
  path_.clear();
  lock_fd_ = -1;
}

}  // namespace accelopt::sandbox

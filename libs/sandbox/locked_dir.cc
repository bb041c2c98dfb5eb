#include "libs/sandbox/locked_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

// Removes the directories whose lock no process holds: their process was killed. A process holds its lock from
// before it uses the directory, and one that finds its lock file gone once it holds it starts over (Create), so an
// unlocked lock file is stale however young.
void RemoveStale(const std::string& root, const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || entry.path().extension() != ".lock") continue;
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

// Whether `fd` is still the file at `path` (a RemoveStale between its creation and its lock unlinks it).
bool StillAt(int fd, const std::string& path) {
  struct stat held {
  }, named{};
  return fstat(fd, &held) == 0 && stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

absl::StatusOr<LockedDir> LockedDir::Create(const std::string& root, const std::string& prefix, unsigned mode) {
  RemoveStale(root, prefix);
  // Another process's RemoveStale may take the new lock file between its creation and its lock and remove the
  // directory: then this starts over with a new name.
  for (int attempt = 0;; ++attempt) {
    std::string tmpl = absl::StrCat(root, "/", prefix, "XXXXXX");
    if (mkdtemp(tmpl.data()) == nullptr) {
      return absl::UnavailableError(absl::StrCat("cannot create a directory in ", root, ": ", std::strerror(errno)));
    }
    const std::string lock_path = tmpl + ".lock";
    int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    const int open_errno = errno;
    // Blocking: a RemoveStale holds the lock only while it removes the directory.
    if (lock_fd >= 0 && flock(lock_fd, LOCK_EX) == 0 && StillAt(lock_fd, lock_path) && fs::is_directory(tmpl)) {
      LockedDir dir(tmpl, lock_fd);  // removes the directory again on failure
      if (chmod(tmpl.c_str(), mode) != 0) {
        return absl::UnavailableError(absl::StrCat("cannot chmod ", tmpl, ": ", std::strerror(errno)));
      }
      return dir;
    }
    if (lock_fd < 0) {
      std::error_code ec;
      fs::remove(tmpl, ec);
      if (open_errno != EEXIST || attempt >= 8) {
        return absl::UnavailableError(absl::StrCat("cannot lock ", lock_path, ": ", std::strerror(open_errno)));
      }
      continue;
    }
    if (StillAt(lock_fd, lock_path)) {  // not locked (flock failed): nobody else took it
      std::error_code ec;
      fs::remove_all(tmpl, ec);
      unlink(lock_path.c_str());
    }
    close(lock_fd);  // else taken and removed by another process: try again
    if (attempt >= 8) return absl::UnavailableError(absl::StrCat("cannot lock ", lock_path, ": taken every time"));
  }
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

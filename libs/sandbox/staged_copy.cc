#include "libs/sandbox/staged_copy.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accelopt::sandbox {
namespace {

namespace fs = std::filesystem;

absl::Status CopyTree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directory(to, ec);
  if (ec || chmod(to.c_str(), 0755) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot create ", to.string(), ": ", ec.message()));
  }
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    const fs::path target = to / entry.path().filename();
    auto status = entry.symlink_status(ec);
    if (ec) break;
    if (fs::is_directory(status)) {
      if (entry.path().filename() == "__pycache__") continue;
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
  std::string tmpl = root + "/accelopt-staged-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a directory in ", root, ": ", std::strerror(errno)));
  }
  StagedCopy copy(tmpl);  // removes the directory again on failure
  if (auto s = CopyTree(source, tmpl); !s.ok()) return s;
  return copy;
}

StagedCopy::StagedCopy(StagedCopy&& other) noexcept : path_(std::exchange(other.path_, "")) {}

StagedCopy& StagedCopy::operator=(StagedCopy&& other) noexcept {
  if (this != &other) {
    StagedCopy old(std::exchange(path_, std::exchange(other.path_, "")));
  }
  return *this;
}

StagedCopy::~StagedCopy() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace accelopt::sandbox

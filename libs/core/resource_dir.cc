#include "libs/core/resource_dir.h"

#include <stdlib.h>

#include <filesystem>

namespace accelopt::core {
namespace fs = std::filesystem;

namespace {

std::string InstalledDataRoot() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (exe.parent_path().parent_path() / "share" / "accelopt").string();
}

}  // namespace

std::vector<std::string> DataRoots() {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("ACCELOPT_DATA_DIR"); env != nullptr && *env != '\0') roots.emplace_back(env);
  if (std::string installed = InstalledDataRoot(); !installed.empty()) roots.push_back(std::move(installed));
  if (const char* bin = std::getenv("ACCELOPT_BIN_DIR"); bin != nullptr && *bin != '\0') {
    roots.push_back((fs::path(bin).parent_path() / "share" / "accelopt").string());
  }
  return roots;
}

std::string FindResourceDir(std::string_view name, std::string_view marker) {
  for (const std::string& root : DataRoots()) {
    const fs::path dir = fs::path(root) / name;
    std::error_code ec;
    if (fs::exists(dir / marker, ec)) {
      fs::path canonical = fs::canonical(dir, ec);
      return ec ? dir.string() : canonical.string();
    }
  }
  return (fs::path(InstalledDataRoot()) / name).string();
}

}  // namespace accelopt::core

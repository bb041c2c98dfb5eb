#include "libs/testing/scratch_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

namespace accelopt::testing {
namespace {

// Whatever holds the directory failed: the running test, else the running suite (a directory made in
// SetUpTestSuite), else the whole run (a global one).
bool OwnerFailed() {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  if (unit.current_test_info() != nullptr) return ::testing::Test::HasFailure();
  if (unit.current_test_suite() != nullptr) return unit.current_test_suite()->Failed();
  return unit.Failed();
}

// <Suite>.<Test> of the running test, with the '/' of parameterized names replaced.
std::string RunningTestName() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (test == nullptr) return "scratch";
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name;
}

}  // namespace

ScratchDir::ScratchDir(std::string_view name, mode_t mode) {
  std::string root = ::testing::TempDir();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  std::string tmpl = root + "/" + (name.empty() ? RunningTestName() : std::string(name)) + "_XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    ADD_FAILURE() << "cannot create a scratch directory " << tmpl << ": " << std::strerror(errno);
    return;
  }
  if (chmod(tmpl.c_str(), mode) != 0) ADD_FAILURE() << "cannot chmod " << tmpl << ": " << std::strerror(errno);
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  if (keep_ || OwnerFailed()) {
    std::cerr << "kept the failed test's scratch directory " << path_ << "\n";
    return;
  }
  // A few tries: a service the test killed may have left a sandbox that is still dying and writing in it.
  std::error_code ec;
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    ec.clear();
    std::filesystem::remove_all(path_, ec);
    if (!ec) return;
  }
  std::cerr << "cannot remove the scratch directory " << path_ << ": " << ec.message() << "\n";
}

}  // namespace accelopt::testing

#include "libs/sandbox/sandbox.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <thread>

#include "libs/core/file.h"

namespace accelopt::sandbox {
namespace {

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = ::testing::TempDir() + "/sandbox_test_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(scratch_);
    std::filesystem::create_directories(scratch_);
  }

  // Runs a Python program inside the sandbox.
  SandboxOutcome RunPython(const std::string& program, absl::Duration timeout = absl::Seconds(30),
                           const std::atomic<bool>* cancel = nullptr) {
    std::ofstream(scratch_ + "/prog.py") << program;
    SandboxSpec spec;
    spec.argv = {"/usr/bin/python3", "/scratch/prog.py"};
    spec.scratch_dir = scratch_;
    spec.env = {{"PATH", "/usr/bin"}};
    spec.timeout = timeout;
    spec.limits.memory_mb = 1024;
    spec.limits.max_processes = 32;
    auto outcome = RunInSandbox(spec, cancel);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : SandboxOutcome{};
  }

  std::string scratch_;
};

TEST_F(SandboxTest, RunsAProgramWithItsScratchWritable) {
  SandboxOutcome o = RunPython("open('/scratch/out.txt', 'w').write('hello')\nprint('done')\n");
  EXPECT_EQ(o.ending, SandboxOutcome::Ending::kExited);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(*core::ReadFile(scratch_ + "/out.txt"), "hello");
  EXPECT_NE(o.output.find("done"), std::string::npos);
}

TEST_F(SandboxTest, SystemIsReadOnlyAndTheRestOfTheFilesystemIsAbsent) {
  SandboxOutcome o = RunPython(R"(
import os
for path in ['/usr/evil', '/etc/evil']:
    try:
        open(path, 'w'); print('WROTE', path)
    except OSError as e: print('denied', path)
print('work visible:', os.path.exists('/work'), 'root visible:', os.path.exists('/root'))
)");
  EXPECT_EQ(o.output.find("WROTE"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("work visible: False root visible: False"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, NoNetwork) {
  SandboxOutcome o = RunPython(R"(
import socket
try:
    socket.create_connection(('1.1.1.1', 80), timeout=2); print('CONNECTED')
except OSError as e: print('unreachable', e.errno)
)");
  EXPECT_EQ(o.output.find("CONNECTED"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("unreachable"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, EnvironmentIsOnlyWhatTheSpecGives) {
  setenv("ACCELOPT_TEST_SECRET", "s3cr3t", 1);
  SandboxOutcome o = RunPython("import os\nprint(sorted(os.environ.items()))\n");
  EXPECT_EQ(o.output.find("s3cr3t"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("PATH"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, DeadlineKillsTheWholeProcessTree) {
  // The program starts a grandchild that would outlive a naive kill, then loops forever.
  SandboxOutcome o = RunPython(R"(
import subprocess, time
subprocess.Popen(['/usr/bin/python3', '-c', 'import time\nwhile True: time.sleep(0.1)'])
open('/scratch/started', 'w').write('1')
while True: pass
)",
                               absl::Seconds(3));
  EXPECT_EQ(o.ending, SandboxOutcome::Ending::kTimedOut);
  EXPECT_LT(o.wall_seconds, 10);
  // Nothing of the sandbox survives: no process still has the scratch dir as its working directory.
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::error_code ec;
    auto cwd = std::filesystem::read_symlink(entry.path() / "cwd", ec);
    if (!ec) {
      EXPECT_NE(cwd.string(), scratch_) << "survivor " << entry.path();
    }
  }
}

TEST_F(SandboxTest, CancellationKillsPromptly) {
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    while (!std::filesystem::exists(scratch_ + "/started")) std::this_thread::yield();
    cancel.store(true);
  });
  SandboxOutcome o =
      RunPython("open('/scratch/started','w').write('1')\nwhile True: pass\n", absl::Seconds(60), &cancel);
  canceller.join();
  EXPECT_EQ(o.ending, SandboxOutcome::Ending::kCancelled);
  EXPECT_LT(o.wall_seconds, 30);
}

TEST_F(SandboxTest, MemoryLimitStopsAMemoryBomb) {
  SandboxOutcome o = RunPython(R"(
chunks = []
try:
    while True: chunks.append(bytearray(64 << 20))
except MemoryError:
    print('MemoryError after', len(chunks) * 64, 'MiB')
)");
  EXPECT_NE(o.output.find("MemoryError after"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, ForkBombIsContained) {
  if (geteuid() != 0) GTEST_SKIP() << "process limits need the worker to run as root (sandbox user)";
  SandboxOutcome o = RunPython(R"(
import os
n = 0
try:
    while n < 10000:
        if os.fork() == 0:
            import time; time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    print('fork refused after', n)
)",
                               absl::Seconds(20));
  EXPECT_NE(o.output.find("fork refused after"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, ManyRunsLeaveNoProcessBehind) {
  if (geteuid() != 0) GTEST_SKIP() << "the sandbox user exists only when the worker runs as root";
  // More runs than the process limit: lingering namespace inits would exhaust it and fail later runs.
  SandboxSpec spec;
  spec.argv = {"/usr/bin/true"};
  spec.scratch_dir = scratch_;
  spec.limits.max_processes = 16;
  spec.sandbox_uid = 61999;
  for (int i = 0; i < 40; ++i) {
    auto outcome = RunInSandbox(spec, nullptr);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    ASSERT_EQ(outcome->exit_code, 0) << "run " << i << ": " << outcome->output;
  }
  int left = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    struct stat st;
    if (std::isdigit(entry.path().filename().string()[0]) && stat(entry.path().c_str(), &st) == 0 &&
        st.st_uid == 61999) {
      ++left;
    }
  }
  EXPECT_EQ(left, 0);
}

TEST_F(SandboxTest, MissingScratchDirIsAPreconditionError) {
  SandboxSpec spec;
  spec.argv = {"/usr/bin/true"};
  spec.scratch_dir = scratch_ + "/missing";
  EXPECT_EQ(RunInSandbox(spec, nullptr).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace accelopt::sandbox

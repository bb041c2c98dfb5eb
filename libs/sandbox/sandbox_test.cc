#include "libs/sandbox/sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <thread>

#include "libs/core/file.h"
#include "libs/sandbox/staged_copy.h"
#include "libs/sandbox/uid_range.h"
#include "libs/testing/scratch_dir.h"
#include "libs/testing/wait_until.h"

namespace accelopt::sandbox {
namespace {

class SandboxTest : public ::testing::Test {
 protected:
  // Runs a Python program inside the sandbox.
  SandboxSpec PythonSpec(const std::string& program) {
    std::ofstream(scratch_ + "/prog.py") << program;
    SandboxSpec spec;
    spec.argv = {"/usr/bin/python3", "/scratch/prog.py"};
    spec.scratch_dir = scratch_;
    spec.env = {{"PATH", "/usr/bin"}};
    spec.limits.memory_mb = 1024;
    spec.limits.max_processes = 32;
    return spec;
  }

  SandboxOutcome Run(const SandboxSpec& spec) {
    auto outcome = RunInSandbox(spec, nullptr);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : SandboxOutcome{};
  }

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

  testing::ScratchDir dir_{"", 0755};  // bound at /scratch
  const std::string scratch_ = dir_.path();
};

TEST_F(SandboxTest, RunsAProgramWithItsScratchWritable) {
  SandboxOutcome o = RunPython("open('/scratch/out.txt', 'w').write('hello')\nprint('done')\n");
  EXPECT_EQ(o.ending, SandboxOutcome::Ending::kExited);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(*core::ReadFile(scratch_ + "/out.txt"), "hello");
  EXPECT_NE(o.output.find("done"), std::string::npos);
}

// A pipe end passed to the program arrives as descriptor 3; it is the program's only descriptor beyond 0-2 (a
// descriptor the worker holds without O_CLOEXEC stays out), and the worker's copy is closed once the program
// started, so the reader sees end-of-file when the program exits.
TEST_F(SandboxTest, PassedDescriptorsArriveFromThreeAndNothingElseLeaks) {
  int ends[2];
  ASSERT_EQ(pipe2(ends, O_CLOEXEC), 0);
  const int stray = open("/dev/null", O_RDONLY);  // inheritable
  ASSERT_GE(stray, 0);
  SandboxSpec spec = PythonSpec(
      "import os\n"
      "os.write(3, b'through the pipe')\n"
      "open_fds = []\n"
      "for fd in range(3, 256):\n"
      "    try:\n"
      "        os.fstat(fd)\n"
      "        open_fds.append(fd)\n"
      "    except OSError:\n"
      "        pass\n"
      "print('open', open_fds)\n");
  spec.pass_fds = {ends[1]};
  SandboxOutcome o = Run(spec);
  EXPECT_EQ(fcntl(ends[1], F_GETFD), -1) << "the worker's copy of the passed end is still open";
  close(stray);
  std::string received;
  char buffer[256];
  ssize_t n;
  while ((n = read(ends[0], buffer, sizeof buffer)) > 0) received.append(buffer, static_cast<size_t>(n));
  close(ends[0]);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(received, "through the pipe");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("open [3]"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, PassedDescriptorsAreClosedWhenTheSandboxCannotStart) {
  int ends[2];
  ASSERT_EQ(pipe2(ends, O_CLOEXEC), 0);
  SandboxSpec spec = PythonSpec("pass\n");
  spec.scratch_dir = scratch_ + "/absent";
  spec.pass_fds = {ends[1]};
  EXPECT_FALSE(RunInSandbox(spec, nullptr).ok());
  EXPECT_EQ(fcntl(ends[1], F_GETFD), -1);
  char c;
  EXPECT_EQ(read(ends[0], &c, 1), 0);
  close(ends[0]);
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

TEST_F(SandboxTest, NoVisibleProcessHoldsTheWorkersEnvironment) {
  setenv("ACCELOPT_TEST_SECRET", "env-secret-7f3a9c", 1);
  SandboxOutcome o = RunPython(R"(
import glob
seen = 0
for path in ['/proc/1/environ', '/proc/self/environ'] + glob.glob('/proc/*/environ'):
    try:
        data = open(path, 'rb').read()
    except OSError:
        continue
    seen += 1
    print(path, data.replace(b'\0', b' ').decode(errors='replace'))
print('environs read:', seen)
)");
  unsetenv("ACCELOPT_TEST_SECRET");
  EXPECT_EQ(o.output.find("env-secret-7f3a9c"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("/proc/1/environ PATH=/usr/bin"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, OutputIsCappedWithHeadAndTailKept) {
  struct statvfs before, after;
  ASSERT_EQ(statvfs("/tmp", &before), 0);
  const std::string program = R"(
import sys
sys.stdout.write('FIRST LINE\n')
chunk = 'x' * (1 << 20)
for _ in range(300):
    sys.stdout.write(chunk)
sys.stdout.write('\nLAST LINE\n')
)";
  // 300 MiB through the pipe: 12 s on an idle machine, over 30 s on a loaded one.
  SandboxOutcome o = RunPython(program, absl::Seconds(120));
  ASSERT_EQ(statvfs("/tmp", &after), 0);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_LE(o.output.size(), 65u << 10);
  EXPECT_EQ(o.output.rfind("FIRST LINE", 0), 0u) << o.output.substr(0, 100);
  EXPECT_NE(o.output.find("LAST LINE"), std::string::npos);
  EXPECT_NE(o.output.find(" bytes dropped ...]"), std::string::npos);
  // 300 MiB went through; the host's /tmp did not take it (a generous bound for other writers meanwhile).
  const double used_mib = (static_cast<double>(before.f_bavail) - after.f_bavail) * before.f_frsize / (1 << 20);
  EXPECT_LT(used_mib, 100);
}

TEST_F(SandboxTest, ScratchAndTmpAreSizeLimitedAndOnlyOutputFilesReachTheHost) {
  SandboxSpec spec = PythonSpec(R"(
import errno
for path in ['/scratch/big', '/tmp/big']:
    try:
        for i in range(16):  # files smaller than the file-size limit, 64 MiB in all
            with open(path + str(i), 'wb') as f:
                f.write(b'x' * (4 << 20))
        print('WROTE', path)
    except OSError as e:
        print('full', path, errno.errorcode[e.errno])
try:
    open('/scratch/prog.py', 'a').write('#')
    print('INPUT CHANGED')
except OSError as e:
    print('input read-only')
open('/scratch/result.txt', 'w').write('ok')
)");
  spec.output_files = {"result.txt", "unwritten.txt"};
  spec.limits.scratch_mb = 16;
  spec.limits.tmp_mb = 16;
  SandboxOutcome o = Run(spec);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("full /scratch/big ENOSPC"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("full /tmp/big ENOSPC"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("input read-only"), std::string::npos) << o.output;
  EXPECT_EQ(*core::ReadFile(scratch_ + "/result.txt"), "ok");
  EXPECT_FALSE(std::filesystem::exists(scratch_ + "/big0"));
  EXPECT_FALSE(std::filesystem::exists(scratch_ + "/unwritten.txt"));
}

TEST_F(SandboxTest, TmpfsSizesMustLeaveMemoryForTheProgram) {
  SandboxSpec spec = PythonSpec("pass");
  spec.output_files = {"out"};
  spec.limits.memory_mb = 512;
  spec.limits.tmp_mb = 256;
  spec.limits.scratch_mb = 256;
  EXPECT_EQ(RunInSandbox(spec, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SandboxTest, AHarnessInAPrivateDirectoryRunsFromAStagedCopy) {
  // A checkout in a 0700 directory with 0600 files, as a umask-077 clone in a private home leaves it.
  const std::string private_dir = scratch_ + "/private";
  std::filesystem::create_directories(private_dir + "/harness");
  std::ofstream(private_dir + "/harness/hello.py") << "print('harness reached')\n";
  chmod((private_dir + "/harness/hello.py").c_str(), 0600);
  chmod(private_dir.c_str(), 0700);
  std::filesystem::create_directories(scratch_ + "/run");
  auto staged = StagedCopy::Create(private_dir + "/harness", scratch_);
  ASSERT_TRUE(staged.ok()) << staged.status();
  SandboxSpec spec;
  spec.argv = {"/usr/bin/python3", "/harness/hello.py"};
  spec.scratch_dir = scratch_ + "/run";
  spec.read_only_binds = {{staged->path(), "/harness"}};
  spec.sandbox_uid = 61998;
  SandboxOutcome o = Run(spec);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("harness reached"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, CpuIsLimitedToTheSlotsShareAndScheduledAsBatch) {
  SandboxSpec spec = PythonSpec(R"(
import os, sys
print('nice', os.getpriority(os.PRIO_PROCESS, 0), 'batch', os.sched_getscheduler(0) == os.SCHED_BATCH, flush=True)
while True: pass
)");
  spec.timeout = absl::Seconds(40);
  spec.limits.cpu_cores = 0.05;  // 2 s of CPU time (rounded up) over the 40 s deadline
  SandboxOutcome o = Run(spec);
  EXPECT_EQ(o.ending, SandboxOutcome::Ending::kSignaled) << o.output;
  EXPECT_EQ(o.signal, SIGXCPU);
  EXPECT_NE(o.output.find("nice 10 batch True"), std::string::npos) << o.output;
}

TEST_F(SandboxTest, ForkBombUnderAnotherWorkerProcessDoesNotStarveThisOne) {
  if (geteuid() != 0) GTEST_SKIP() << "per-uid process limits need the worker to run as root (sandbox users)";
  UidRangeOptions ranges;
  ranges.lock_dir = scratch_ + "/uid-locks";
  ranges.first = 62000;
  ranges.width = 4;
  auto mine = UidRange::AcquireAny(ranges);
  ASSERT_TRUE(mine.ok()) << mine.status();
  const std::string bomb_scratch = scratch_ + "/bomb";
  std::filesystem::create_directories(bomb_scratch);
  std::ofstream(bomb_scratch + "/prog.py") << R"(
import os, time
n = 0
try:
    while n < 10000:
        if os.fork() == 0:
            time.sleep(60); os._exit(0)
        n += 1
except OSError:
    pass
open('/scratch/saturated', 'w').write(str(n))
time.sleep(60)
)";
  pid_t other_worker = fork();
  ASSERT_GE(other_worker, 0);
  if (other_worker == 0) {
    auto theirs = UidRange::AcquireAny(ranges);
    if (!theirs.ok()) _exit(2);
    SandboxSpec bomb;
    bomb.argv = {"/usr/bin/python3", "/scratch/prog.py"};
    bomb.scratch_dir = bomb_scratch;
    bomb.limits.max_processes = 32;
    bomb.timeout = absl::Seconds(30);
    bomb.sandbox_uid = theirs->uid(0);
    // SIGTERM cancels the sandbox, which kills the bomb's whole tree before this worker exits: its sleeping
    // processes would otherwise hold the uid's process budget for a minute, starving the next run of this test.
    static std::atomic<bool> stop{false};
    signal(SIGTERM, [](int) { stop = true; });
    auto outcome = RunInSandbox(bomb, &stop);
    _exit(outcome.ok() ? 0 : 1);
  }
  // The bomb runs in another process and leaves only a file behind: poll for it.
  bool bomb_ended = false;
  absl::Status saturated = testing::WaitUntil(
      [&] {
        int status;
        bomb_ended = waitpid(other_worker, &status, WNOHANG) != 0;
        return bomb_ended || std::filesystem::exists(bomb_scratch + "/saturated");
      },
      std::chrono::seconds(30), "the fork bomb saturating its uid");
  ASSERT_FALSE(bomb_ended) << "the fork bomb ended before saturating";
  ASSERT_TRUE(saturated.ok()) << saturated;
  SandboxSpec honest = PythonSpec(R"(
import subprocess
for _ in range(8): subprocess.run(['/usr/bin/true'], check=True)
print('honest run done')
)");
  honest.sandbox_uid = mine->uid(0);
  SandboxOutcome o = Run(honest);
  kill(other_worker, SIGTERM);  // it cancels its sandbox, then exits
  int status;
  waitpid(other_worker, &status, 0);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("honest run done"), std::string::npos) << o.output;
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
    // The sandboxed program is another process; it marks its start with a file.
    absl::Status started = testing::WaitUntil([&] { return std::filesystem::exists(scratch_ + "/started"); },
                                              std::chrono::seconds(60), "sandboxed program started");
    EXPECT_TRUE(started.ok()) << started;
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
  SandboxSpec spec = PythonSpec(R"(
import os
n = 0
try:
    while n < 10000:
        if os.fork() == 0:
            import time; time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    print('fork refused after', n)
)");
  spec.timeout = absl::Seconds(20);
  // A uid of its own: the process limit counts every process of the uid, so a bomb under the default uid
  // starves the sandboxes of tests running beside it (ctest -j), which then cannot start.
  spec.sandbox_uid = 61997;
  SandboxOutcome o = Run(spec);
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

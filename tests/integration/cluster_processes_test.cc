// The five service binaries as real processes: health, /metrics, graceful SIGTERM, bad config, busy port,
// and the `accelopt` CLI's local cluster (up twice, status of a crashed service, down).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "libs/core/file.h"
#include "libs/testing/child_process.h"
#include "libs/testing/free_ports.h"
#include "libs/testing/http_get.h"
#include "libs/testing/scratch_dir.h"
#include "libs/testing/wait_until.h"
#include "tests/integration/service_process.h"

namespace accelopt {
namespace {

using integration::kBinDir;
using integration::kClusterPortSpan;
using integration::kServiceNames;
using integration::ServiceProcess;
using integration::StartService;
using testing::ChildProcess;
using namespace std::chrono_literals;

// True while `pid` exists and is not a zombie.
bool ProcessIsRunning(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  stat >> pid_field >> comm >> state;  // comm is "(planner)": no spaces in our binaries' names
  return state != "Z";
}

TEST(ClusterProcessesTest, FiveServicesServeHealthAndMetricsAndStopCleanlyOnSigterm) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  std::vector<ServiceProcess> services;
  for (const auto& name : kServiceNames) services.push_back(StartService(name, dir));
  for (auto& s : services) {
    ASSERT_TRUE(testing::WaitForServing(s.grpc_address, 20s).ok()) << s.name << "\n" << s.process.Output();
  }
  for (auto& s : services) {
    // The health check above went through the RPC metrics interceptor, which records the call when it is
    // destroyed, just after the response left: poll until the sample shows.
    absl::StatusOr<std::string> body;
    absl::Status waited = testing::WaitUntil(
        [&] {
          body = testing::HttpGet(s.metrics_address, "/metrics");
          return !body.ok() || body->find("grpc_service=\"grpc.health.v1.Health\"") != std::string::npos;
        },
        10s, s.name + " health RPC in /metrics");
    ASSERT_TRUE(body.ok()) << s.name << ": " << body.status();
    EXPECT_TRUE(waited.ok()) << waited << "\n" << *body;
    EXPECT_NE(body->find("accelopt_rpc_server_handled_total"), std::string::npos) << s.name;
  }
  for (auto& s : services) s.process.Signal(SIGTERM);
  for (auto& s : services) {
    // Drain deadline is 2 s; allow start-to-exit slack for a loaded machine.
    std::optional<int> status = s.process.WaitForExit(10s);
    ASSERT_TRUE(status.has_value()) << s.name << " did not exit after SIGTERM";
    EXPECT_TRUE(WIFEXITED(*status)) << s.name;
    EXPECT_EQ(WEXITSTATUS(*status), 0) << s.name << "\n" << s.process.Output();
    EXPECT_NE(s.process.Output().find("stopped"), std::string::npos) << s.name;
  }
}

TEST(ClusterProcessesTest, EveryBinaryHasHelp) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  for (const auto& name : kServiceNames) {
    auto p = ChildProcess::Start({kBinDir + "/accelopt-" + name, "--help"}, dir + "/" + name + ".log");
    ASSERT_TRUE(p.ok());
    auto status = p->WaitForExit(10s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(WEXITSTATUS(*status), 0) << name;
    EXPECT_NE(p->Output().find("--config"), std::string::npos) << name << p->Output();
    EXPECT_NE(p->Output().find("--admin_port"), std::string::npos) << name;
    // Unset sentinels are not shown as defaults.
    EXPECT_EQ(p->Output().find("(default: \"-1\")"), std::string::npos) << name << p->Output();
    EXPECT_EQ(p->Output().find("(default: \"\")"), std::string::npos) << name << p->Output();
  }
}

// The CLI: one command's help, and a suggestion for a mistyped command or option (exit 2, one line).
TEST(ClusterProcessesTest, CliHelpPerCommandAndSuggestionsForTypos) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  auto run = [&](const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> argv = {kBinDir + "/accelopt"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = ChildProcess::Start(argv, dir + "/" + log);
    EXPECT_TRUE(p.ok());
    auto status = p->WaitForExit(10s);
    EXPECT_TRUE(status.has_value() && WIFEXITED(*status));
    return std::pair<int, std::string>{status.has_value() ? WEXITSTATUS(*status) : -1, p->Output()};
  };
  for (const auto& args : std::vector<std::vector<std::string>>{{"submit", "--help"}, {"help", "submit"}}) {
    auto [code, output] = run(args, "help.log");
    EXPECT_EQ(code, 0);
    EXPECT_EQ(output.rfind("Usage: accelopt submit JOB.yaml", 0), 0u) << output;
    EXPECT_EQ(output.find("  watch JOB"), std::string::npos) << "only the one command: " << output;
    EXPECT_NE(output.find("Exit codes"), std::string::npos) << output;
  }
  auto [typo, typo_output] = run({"sumbit", "job.yaml"}, "typo.log");
  EXPECT_EQ(typo, 2);
  EXPECT_EQ(typo_output, "accelopt: unknown command 'sumbit'; did you mean 'submit'? (see accelopt help)\n");
  auto [option, option_output] = run({"list", "--jsno"}, "option.log");
  EXPECT_EQ(option, 2);
  EXPECT_EQ(option_output, "accelopt: unknown option --jsno (did you mean --json?) (see accelopt help)\n");
  // A bad job file is named once (the spec is read before any server is called).
  std::ofstream(dir + "/bad.yaml") << "presett: smoke\n";
  auto [bad, bad_output] = run({"submit", dir + "/bad.yaml", "--server", "127.0.0.1:1"}, "bad.log");
  EXPECT_EQ(bad, 1);
  EXPECT_EQ(bad_output, "accelopt: error: " + dir + "/bad.yaml: unknown key 'presett' (line 1); known keys here: " +
                            "name, preset, problem, baseline, device, seed, search, models, profile, budget, stop, "
                            "owner\n");
}

TEST(ClusterProcessesTest, UnknownConfigKeyExitsNonZeroNamingTheKey) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  std::ofstream(dir + "/p.yaml") << "server: {drain_secs: 1}\n";
  auto p = ChildProcess::Start({kBinDir + "/accelopt-planner", "--config", dir + "/p.yaml"}, dir + "/log");
  ASSERT_TRUE(p.ok());
  auto status = p->WaitForExit(10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(WEXITSTATUS(*status), 0);
  EXPECT_NE(p->Output().find("unknown key 'server.drain_secs'"), std::string::npos) << p->Output();
}

TEST(ClusterProcessesTest, PortInUseExitsWithOneClearLine) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  ServiceProcess first = StartService("executor", dir);
  ASSERT_TRUE(testing::WaitForServing(first.grpc_address, 20s).ok());
  std::string port = first.grpc_address.substr(first.grpc_address.rfind(':') + 1);
  auto second = ChildProcess::Start({kBinDir + "/accelopt-executor", "--port", port}, dir + "/second.log");
  ASSERT_TRUE(second.ok());
  auto status = second->WaitForExit(10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(WEXITSTATUS(*status), 1);
  std::string out = second->Output();
  std::string expected = "accelopt-executor: error: cannot listen on 127.0.0.1:" + port + ": Address already in use";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  // The error is the last line, alone.
  EXPECT_EQ(out.substr(out.rfind('\n', out.size() - 2) + 1), expected + "\n") << out;
}

// Runs the CLI to completion and returns (exit code, output).
std::pair<int, std::string> Cli(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {kBinDir + "/accelopt"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = ChildProcess::Start(argv, log);
  EXPECT_TRUE(p.ok());
  auto status = p->WaitForExit(90s);
  EXPECT_TRUE(status.has_value()) << "accelopt " << args[0] << " hung";
  return {status ? WEXITSTATUS(*status) : -1, p->Output()};
}

// A foreign server on a port of the plan: up refuses before starting anything there (a SERVING answer from the
// foreign server would have stood for the child that could not bind), and leaves nothing running.
TEST(ClusterProcessesTest, UpRefusesAPortAnotherProcessServesOn) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  const int base = testing::FreePortRange(kClusterPortSpan);
  const std::string planner_port = std::to_string(base + 1);
  auto foreign =
      ChildProcess::Start({kBinDir + "/accelopt-planner", "--port", planner_port, "--admin_port", "0"}, dir + "/f.log");
  ASSERT_TRUE(foreign.ok());
  ASSERT_TRUE(testing::WaitForServing("127.0.0.1:" + planner_port, 20s).ok());
  auto [code, out] = Cli({"up", "--data-dir", dir + "/cluster", "--base-port", std::to_string(base)}, dir + "/up.log");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("planner: 127.0.0.1:" + planner_port + " is in use by another process"), std::string::npos) << out;
  auto [status_code, status_out] = Cli({"status", "--data-dir", dir + "/cluster"}, dir + "/status.log");
  EXPECT_EQ(status_code, 1) << status_out;
  EXPECT_NE(status_out.find("no cluster recorded"), std::string::npos) << status_out;
}

TEST(ClusterProcessesTest, BadEndpointConfigExitsNamingTheField) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  std::ofstream(dir + "/p.yaml")
      << "llm: {endpoints: [{name: vllm, base_url: \"vllm:8000/v1\", models: [{name: m}]}]}\n";
  auto p = ChildProcess::Start({kBinDir + "/accelopt-planner", "--config", dir + "/p.yaml"}, dir + "/log");
  ASSERT_TRUE(p.ok());
  auto status = p->WaitForExit(10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(WEXITSTATUS(*status), 0);
  EXPECT_NE(p->Output().find("llm.endpoints[0].base_url: "), std::string::npos) << p->Output();
}

TEST(ClusterProcessesTest, CliUpTwiceStatusCrashAndDown) {
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  // The cluster config's llm block reaches the agent services (their endpoints and prices).
  std::ofstream(dir + "/cluster.yaml")
      << "llm: {endpoints: [{name: local, base_url: \"http://127.0.0.1:8000/v1\", models: [{name: qwen}]}]}\n";
  // Another process may take a port of the range between the probe and the bind: try another range then.
  std::string base;
  int up_code = -1;
  std::string up_out;
  for (int attempt = 0; attempt < 3 && up_code != 0; ++attempt) {
    if (attempt > 0) Cli({"down", "--data-dir", dir}, dir + "/down0.log");
    base = std::to_string(testing::FreePortRange(kClusterPortSpan, attempt));
    std::tie(up_code, up_out) =
        Cli({"up", "--data-dir", dir, "--config", dir + "/cluster.yaml", "--base-port", base}, dir + "/up.log");
  }
  ASSERT_EQ(up_code, 0) << up_out;
  for (const auto& name : {"orchestrator", "planner", "executor", "memory", "profiler-0"}) {
    EXPECT_NE(up_out.find(name), std::string::npos) << up_out;
  }
  for (const auto& name : {"planner", "executor", "memory"}) {
    auto config = core::ReadFile(dir + "/config/" + name + ".yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_NE(config->find("\"base_url\":\"http://127.0.0.1:8000/v1\""), std::string::npos) << name << *config;
  }

  auto [again_code, again_out] = Cli({"up", "--data-dir", dir, "--base-port", base}, dir + "/up2.log");
  EXPECT_EQ(again_code, 0) << again_out;
  EXPECT_NE(again_out.find("cluster already running"), std::string::npos) << again_out;

  auto [st_code, st_out] = Cli({"status", "--data-dir", dir}, dir + "/status.log");
  EXPECT_EQ(st_code, 0) << st_out;
  EXPECT_EQ(std::count(st_out.begin(), st_out.end(), '\n'), 6) << st_out;  // header + 5 services
  EXPECT_NE(st_out.find("0.1.0"), std::string::npos) << st_out;

  // Kill one service hard: status reports it as crashed and fails.
  auto state = core::ReadFile(dir + "/cluster.json");
  ASSERT_TRUE(state.ok());
  auto pos = state->find("\"name\": \"planner\"");
  ASSERT_NE(pos, std::string::npos) << *state;
  auto pid_pos = state->find("\"pid\": \"", pos);
  int planner_pid = std::stoi(state->substr(pid_pos + 8));
  ASSERT_EQ(kill(planner_pid, SIGKILL), 0);
  // The planner is the CLI's child, not ours: wait until its pid is gone (or a zombie, if nobody reaps it).
  EXPECT_TRUE(testing::WaitUntil([&] { return !ProcessIsRunning(planner_pid); }, 10s, "killed planner gone").ok());
  auto [crash_code, crash_out] = Cli({"status", "--data-dir", dir}, dir + "/status2.log");
  EXPECT_EQ(crash_code, 1) << crash_out;
  EXPECT_NE(crash_out.find("CRASHED"), std::string::npos) << crash_out;
  EXPECT_NE(crash_out.find("not serving: planner"), std::string::npos) << crash_out;

  // up restarts only the crashed service, as it was recorded: on the address the others dial and with the
  // config of the first up (its llm block), also when this call gives neither --base-port nor --config.
  const std::string planner_address = "127.0.0.1:" + std::to_string(std::stoi(base) + 1);
  auto [re_code, re_out] = Cli({"up", "--data-dir", dir}, dir + "/up3.log");
  EXPECT_EQ(re_code, 0) << re_out;
  EXPECT_NE(re_out.find("orchestrator: already running"), std::string::npos) << re_out;
  EXPECT_EQ(re_out.find("planner: already running"), std::string::npos) << re_out;
  EXPECT_NE(re_out.find("planner: restarting on " + planner_address), std::string::npos) << re_out;
  auto restarted = core::ReadFile(dir + "/cluster.json");
  ASSERT_TRUE(restarted.ok());
  EXPECT_NE(restarted->find("\"grpc_address\": \"" + planner_address + "\""), std::string::npos) << *restarted;
  auto planner_config = core::ReadFile(dir + "/config/planner.yaml");
  ASSERT_TRUE(planner_config.ok());
  EXPECT_NE(planner_config->find("http://127.0.0.1:8000/v1"), std::string::npos) << *planner_config;
  auto [re_st_code, re_st_out] = Cli({"status", "--data-dir", dir}, dir + "/status2b.log");
  EXPECT_EQ(re_st_code, 0) << re_st_out;

  // A running cluster keeps its number of profilers: another number is refused and changes nothing.
  auto [more_code, more_out] = Cli({"up", "--data-dir", dir, "--profilers", "2"}, dir + "/up4.log");
  EXPECT_EQ(more_code, 1) << more_out;
  EXPECT_NE(more_out.find("is running with 1 profiler(s)"), std::string::npos) << more_out;
  auto unchanged = core::ReadFile(dir + "/cluster.json");
  ASSERT_TRUE(unchanged.ok());
  EXPECT_EQ(*unchanged, *restarted);

  auto [down_code, down_out] = Cli({"down", "--data-dir", dir, "--json"}, dir + "/down.log");
  EXPECT_EQ(down_code, 0) << down_out;
  EXPECT_NE(down_out.find("cluster down"), std::string::npos);  // progress, on stderr
  EXPECT_NE(down_out.find("{\"data_dir\":\"" + dir + "\",\"stopped\":true}\n"), std::string::npos) << down_out;
  EXPECT_EQ(down_out.find("killed"), std::string::npos) << down_out;
  auto [after_code, after_out] = Cli({"status", "--data-dir", dir}, dir + "/status3.log");
  EXPECT_EQ(after_code, 1);
  EXPECT_NE(after_out.find("no cluster recorded"), std::string::npos) << after_out;
}

}  // namespace
}  // namespace accelopt

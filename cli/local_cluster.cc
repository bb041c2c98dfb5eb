#include "cli/local_cluster.h"

#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "accelopt/v1/info_service.grpc.pb.h"
#include "cli/listening_port.h"
#include "cli/secure_cluster.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "libs/core/file.h"
#include "libs/core/status_macros.h"
#include "services/profiler/backend_registry.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// What to start for one service of the cluster.
struct ServicePlan {
  std::string name;    // "orchestrator", "profiler-0", ...
  std::string binary;  // "accelopt-orchestrator"
  int port = 0;
  int admin_port = 0;
  std::string config;  // YAML
};

std::string Loopback(int port) { return absl::StrCat("127.0.0.1:", port); }

int PortOr(int configured, int fallback) { return configured > 0 ? configured : fallback; }

// Services that only the orchestrator calls (mutual TLS required in a secure cluster).
bool IsInternal(const std::string& name) { return name != "orchestrator" && name != "memory"; }

// The plan of every service; `secure` adds TLS, mTLS inside and authentication (see secure_cluster.h).
std::vector<ServicePlan> PlanCluster(const v1::ClusterConfig& c, bool secure) {
  const int base = c.base_port();
  auto plain = [](int port, int admin) {
    return absl::StrFormat("grpc_address: \"127.0.0.1:%d\", admin_address: \"127.0.0.1:%d\"", port, admin);
  };
  std::string name;  // the service whose `server:` line is built next
  auto server = [&](int port, int admin) {
    std::string extra = secure ? SecureServerFields(c.data_dir(), name, IsInternal(name)) : "";
    return absl::StrCat("server: {", plain(port, admin), extra, "}\n");
  };
  std::vector<ServicePlan> plans;
  ServicePlan planner{"planner", "accelopt-planner", PortOr(c.planner().port(), base + 1),
                      PortOr(c.planner().admin_port(), base + 101), ""};
  ServicePlan executor{"executor", "accelopt-executor", PortOr(c.executor().port(), base + 2),
                       PortOr(c.executor().admin_port(), base + 102), ""};
  ServicePlan memory{"memory", "accelopt-memory", PortOr(c.memory().port(), base + 3),
                     PortOr(c.memory().admin_port(), base + 103), ""};
  // The agents' llm block as JSON, which the YAML loader reads as a flow mapping.
  std::string llm;
  if (c.has_llm()) {
    google::protobuf::util::JsonPrintOptions json;
    json.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(c.llm(), &llm, json);  // a parsed message always prints
    llm = absl::StrCat("llm: ", llm, "\n");
  }
  name = "planner";
  planner.config = server(planner.port, planner.admin_port) + llm;
  name = "executor";
  executor.config = server(executor.port, executor.admin_port) + llm;
  name = "memory";
  memory.config =
      server(memory.port, memory.admin_port) + llm + absl::StrCat("data_dir: \"", c.data_dir(), "/memory\"\n");
  std::vector<ServicePlan> profilers;
  std::vector<std::string> profiler_addresses;
  for (int i = 0; i < c.profilers(); ++i) {
    ServicePlan p{absl::StrCat("profiler-", i), "accelopt-profiler", PortOr(c.profiler().port(), base + 10) + i,
                  PortOr(c.profiler().admin_port(), base + 110) + i, ""};
    name = p.name;
    p.config =
        server(p.port, p.admin_port) + absl::StrCat("device: ", profiler::BuiltinBackends().Name(c.device()), "\n");
    profiler_addresses.push_back(absl::StrCat("\"", Loopback(p.port), "\""));
    profilers.push_back(std::move(p));
  }
  ServicePlan orchestrator{"orchestrator", "accelopt-orchestrator", PortOr(c.orchestrator().port(), base),
                           PortOr(c.orchestrator().admin_port(), base + 100), ""};
  name = "orchestrator";
  orchestrator.config = server(orchestrator.port, orchestrator.admin_port) +
                        (secure ? OrchestratorClientTls(c.data_dir()) : "") +
                        absl::StrCat("data_dir: \"", c.data_dir(), "/orchestrator\"\n", "planner_address: \"",
                                     Loopback(planner.port), "\"\n", "executor_address: \"", Loopback(executor.port),
                                     "\"\n", "memory_address: \"", Loopback(memory.port), "\"\n",
                                     "profiler_addresses: [", absl::StrJoin(profiler_addresses, ", "), "]\n");
  // Dependencies first, the orchestrator last.
  plans.push_back(std::move(planner));
  plans.push_back(std::move(executor));
  plans.push_back(std::move(memory));
  for (auto& p : profilers) plans.push_back(std::move(p));
  plans.push_back(std::move(orchestrator));
  return plans;
}

std::string StatePath(const std::string& data_dir) { return data_dir + "/cluster.json"; }

absl::StatusOr<v1::LocalClusterState> LoadState(const std::string& data_dir) {
  auto text = core::ReadFile(StatePath(data_dir));
  if (!text.ok()) {
    return absl::NotFoundError(absl::StrCat("no cluster recorded in ", data_dir, " (run `accelopt up`)"));
  }
  v1::LocalClusterState state;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // written by a newer accelopt
  if (!google::protobuf::util::JsonStringToMessage(*text, &state, options).ok()) {
    return absl::DataLossError(absl::StrCat(StatePath(data_dir), " is corrupt; remove it and run up"));
  }
  return state;
}

absl::Status SaveState(const std::string& data_dir, const v1::LocalClusterState& state) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(state, &json, options);
  return core::WriteFileAtomic(StatePath(data_dir), json);
}

// True when `pid` runs `binary` (guards against a recycled pid).
bool IsRunning(int64_t pid, const std::string& binary) {
  if (pid <= 0 || kill(static_cast<pid_t>(pid), 0) != 0) return false;
  auto cmdline = core::ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
  auto stat = core::ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!cmdline.ok() || cmdline->find(binary) == std::string::npos) return false;
  // A zombie (state Z) has exited.
  if (stat.ok()) {
    auto close_paren = stat->rfind(')');
    if (close_paren != std::string::npos && close_paren + 2 < stat->size() && (*stat)[close_paren + 2] == 'Z') {
      return false;
    }
  }
  return true;
}

// Holds an exclusive lock on <data_dir>/cluster.lock for the life of the object.
class ClusterLock {
 public:
  static absl::StatusOr<std::unique_ptr<ClusterLock>> Acquire(const std::string& data_dir) {
    int fd = open((data_dir + "/cluster.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot create ", data_dir, "/cluster.lock"));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("another accelopt command is managing the cluster in ", data_dir));
    }
    return std::unique_ptr<ClusterLock>(new ClusterLock(fd));
  }
  ~ClusterLock() { close(fd_); }

 private:
  explicit ClusterLock(int fd) : fd_(fd) {}
  int fd_;
};

absl::StatusOr<pid_t> Spawn(const std::string& binary_path, const std::string& config_path,
                            const std::string& log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open log ", log_path));
  pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return absl::UnavailableError("fork failed");
  }
  if (pid == 0) {
    setsid();  // outlives the CLI; not hit by the terminal's Ctrl-C
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(binary_path.c_str(), binary_path.c_str(), "--config", config_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fd);
  return pid;
}

std::string Tail(const std::string& path, size_t lines) {
  auto text = core::ReadFile(path);
  if (!text.ok()) return "";
  std::string s = *text;
  size_t pos = s.size();
  for (size_t n = 0; n <= lines && pos != std::string::npos && pos > 0;) {
    pos = s.rfind('\n', pos - 1);
    if (pos != std::string::npos) ++n;
  }
  return pos == std::string::npos ? s : s.substr(pos + 1);
}

struct Probe {
  std::string state;  // SERVING, NOT_SERVING, UNREACHABLE
  std::string version;
  // RFC 3339, from GetInfo; empty when the service did not answer.
  std::string started_at;
};

Probe ProbeService(const std::string& address, std::chrono::milliseconds timeout,
                   const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  auto channel = grpc::CreateChannel(address, credentials);
  Probe probe{"UNREACHABLE", "-", ""};
  grpc::ClientContext hctx;
  hctx.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::health::v1::HealthCheckResponse health;
  grpc::Status s =
      grpc::health::v1::Health::NewStub(channel)->Check(&hctx, grpc::health::v1::HealthCheckRequest(), &health);
  if (!s.ok()) return probe;
  probe.state = health.status() == grpc::health::v1::HealthCheckResponse::SERVING ? "SERVING" : "NOT_SERVING";
  grpc::ClientContext ictx;
  ictx.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::GetInfoResponse info;
  if (v1::InfoService::NewStub(channel)->GetInfo(&ictx, v1::GetInfoRequest(), &info).ok()) {
    probe.version = info.version();
    if (info.has_started_at()) probe.started_at = google::protobuf::util::TimeUtil::ToString(info.started_at());
  }
  return probe;
}

// The port of a "host:port" address (0 when there is none).
int PortOf(const std::string& address) {
  int port = 0;
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) return 0;
  return port;
}

// Waits until the service is SERVING, failing fast if its process exits.
absl::Status AwaitServing(const v1::LocalServiceState& s, pid_t pid, double timeout_seconds,
                          const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      std::string tail = Tail(s.log_path(), 3);
      return absl::UnavailableError(
          absl::StrCat(s.name(), " exited during start-up (log ", s.log_path(), "):\n", tail));
    }
    // Only the child's own answer counts: another server on the port would answer for a child about to fail to
    // bind it.
    if (ProbeService(s.grpc_address(), std::chrono::milliseconds(500), credentials).state == "SERVING" &&
        ProcessListensOn(pid, PortOf(s.grpc_address()))) {
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat(s.name(), " did not become SERVING within ", timeout_seconds, " s (log ", s.log_path(), ")"));
}

// SIGTERM, then SIGKILL after `grace`. Returns true when the process had to be killed.
bool StopProcess(int64_t pid, const std::string& binary, std::chrono::milliseconds grace) {
  if (!IsRunning(pid, binary)) return false;
  kill(static_cast<pid_t>(pid), SIGTERM);
  auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    waitpid(static_cast<pid_t>(pid), nullptr, WNOHANG);  // reap if it is our child
    if (!IsRunning(pid, binary)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(static_cast<pid_t>(pid), SIGKILL);
  waitpid(static_cast<pid_t>(pid), nullptr, WNOHANG);
  return true;
}

// Stops a child this `up` spawned: SIGTERM, SIGKILL after `grace`. Unlike StopProcess it does not look at
// /proc, where a child that has not yet exec'ed still shows the CLI's command line. The pid cannot have been
// recycled while the child is unreaped; one already reaped (it exited) is left alone.
void StopChild(pid_t pid, std::chrono::milliseconds grace) {
  if (waitpid(pid, nullptr, WNOHANG) != 0) return;  // exited (reaped now) or no longer our child
  kill(pid, SIGTERM);
  auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    if (waitpid(pid, nullptr, WNOHANG) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

void PrintServiceLine(std::ostream& out, const std::string& name, const std::string& state, const std::string& grpc,
                      const std::string& metrics, const std::string& version, const std::string& pid) {
  out << absl::StrFormat("%-14s %-12s %-17s %-17s %-8s %s\n", name, state, grpc, metrics, version, pid);
}

// Prints one line per recorded service (or, with `json`, one JSON document listing each service's name,
// address, metrics address, state, version and pid); returns the names of those not SERVING.
std::vector<std::string> PrintStatusTable(const v1::LocalClusterState& state, const std::string& data_dir,
                                          std::ostream& out, bool json = false) {
  auto credentials = ClusterChannelCredentials(data_dir);
  if (!json) PrintServiceLine(out, "SERVICE", "STATE", "GRPC", "METRICS", "VERSION", "PID");
  nlohmann::json services = nlohmann::json::array();
  std::vector<std::string> unhealthy;
  for (const auto& s : state.services()) {
    bool running = IsRunning(s.pid(), s.binary());
    Probe probe =
        running ? ProbeService(s.grpc_address(), std::chrono::seconds(2), credentials) : Probe{"CRASHED", "-", ""};
    if (probe.state != "SERVING") unhealthy.push_back(s.name());
    if (json) {
      services.push_back(
          {{"name", s.name()},
           {"address", s.grpc_address()},
           {"metrics_address", s.admin_address()},
           {"state", probe.state},
           {"version", probe.version},
           {"started_at", probe.started_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(probe.started_at)},
           {"pid", s.pid()}});
    } else {
      PrintServiceLine(out, s.name(), probe.state, s.grpc_address(), s.admin_address(), probe.version,
                       running ? absl::StrCat(s.pid()) : absl::StrCat(s.pid(), " (exited; log ", s.log_path(), ")"));
    }
  }
  if (json) {
    const std::string now = google::protobuf::util::TimeUtil::ToString(
        google::protobuf::util::TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(absl::Now())));
    out << nlohmann::json{{"checked_at", now},
                          {"data_dir", data_dir},
                          {"secure", IsSecureDataDir(data_dir)},
                          {"services", services}}
               .dump()
        << "\n";
  }
  return unhealthy;
}

}  // namespace

absl::StatusOr<std::string> ClusterServiceAddress(const std::string& server, const std::string& data_dir,
                                                  const std::string& service, const std::string& fallback) {
  if (!server.empty()) return server;
  auto state = LoadState(data_dir);
  if (absl::IsNotFound(state.status())) return fallback;
  if (!state.ok()) return absl::DataLossError(absl::StrCat(StatePath(data_dir), " is corrupt; pass --server ADDR"));
  for (const v1::LocalServiceState& recorded : state->services()) {
    if (recorded.name() == service && !recorded.grpc_address().empty()) return recorded.grpc_address();
  }
  return fallback;
}

void ApplyClusterDefaults(v1::ClusterConfig* c, const std::string& default_bin_dir) {
  if (c->data_dir().empty()) c->set_data_dir("./.accelopt");
  if (c->base_port() == 0) c->set_base_port(50050);
  if (c->device() == v1::DEVICE_UNSPECIFIED) c->set_device(v1::DEVICE_SIM_TRN1);
  if (c->bin_dir().empty()) c->set_bin_dir(default_bin_dir);
  if (c->startup_timeout_seconds() == 0) c->set_startup_timeout_seconds(30);
}

absl::Status Up(const v1::ClusterConfig& config, std::ostream& out, bool secure) {
  std::error_code ec;
  fs::create_directories(config.data_dir() + "/logs", ec);
  fs::create_directories(config.data_dir() + "/config", ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", config.data_dir(), ": ", ec.message()));
  std::string data_dir = fs::absolute(config.data_dir()).lexically_normal().string();
  v1::ClusterConfig c = config;
  c.set_data_dir(data_dir);
  ACCELOPT_ASSIGN_OR_RETURN(auto lock, ClusterLock::Acquire(data_dir));

  v1::LocalClusterState previous;
  if (auto loaded = LoadState(data_dir); loaded.ok()) previous = *loaded;
  bool cluster_running = false;
  int recorded_profilers = 0;
  for (const auto& p : previous.services()) {
    cluster_running |= IsRunning(p.pid(), p.binary());
    recorded_profilers += absl::StartsWith(p.name(), "profiler-") ? 1 : 0;
  }
  // A running cluster keeps its shape: its orchestrator dials the profilers it was started with, so a profiler
  // added now would sit unused, and one left out would keep running unrecorded. Unless given, the number of
  // profilers is the running cluster's, else 1.
  if (c.profilers() == 0) c.set_profilers(cluster_running && recorded_profilers > 0 ? recorded_profilers : 1);
  if (cluster_running && recorded_profilers != c.profilers()) {
    return absl::FailedPreconditionError(absl::StrCat("the cluster in ", data_dir, " is running with ",
                                                      recorded_profilers, " profiler(s); `accelopt down --data-dir ",
                                                      data_dir, "` first to start it with ", c.profilers()));
  }

  std::vector<ServicePlan> plans = PlanCluster(c, secure);
  if (secure) {
    std::vector<std::string> names;
    for (const ServicePlan& plan : plans) names.push_back(plan.name);
    ACCELOPT_RETURN_IF_ERROR(EnsureSecureMaterial(data_dir, names));
  } else if (IsSecureDataDir(data_dir)) {
    return absl::FailedPreconditionError(
        absl::StrCat(data_dir, " holds a secure cluster; start it with `accelopt up --secure`"));
  }
  auto credentials = ClusterChannelCredentials(data_dir);

  v1::LocalClusterState state;
  std::vector<std::pair<v1::LocalServiceState, pid_t>> started;
  absl::Status failure;
  for (const ServicePlan& plan : plans) {
    v1::LocalServiceState s;
    s.set_name(plan.name);
    s.set_binary(plan.binary);
    s.set_grpc_address(Loopback(plan.port));
    s.set_admin_address(Loopback(plan.admin_port));
    s.set_log_path(absl::StrCat(data_dir, "/logs/", plan.name, ".log"));
    s.set_config_path(absl::StrCat(data_dir, "/config/", plan.name, ".yaml"));
    // Keep a recorded service that is still running.
    const v1::LocalServiceState* running = nullptr;
    const v1::LocalServiceState* recorded = nullptr;
    for (const auto& p : previous.services()) {
      if (p.name() != plan.name) continue;
      if (IsRunning(p.pid(), p.binary())) running = &p;
      recorded = &p;
    }
    if (running != nullptr) {
      *state.add_services() = *running;
      out << plan.name << ": already running (pid " << running->pid() << ")\n";
      continue;
    }
    // A crashed service of a cluster that still runs comes back as it was recorded: the running services are
    // wired to its addresses, and its config file keeps the settings of the `up` that started it (a new plan
    // from this call's flags, e.g. without --base-port or --config, would not match them).
    bool reuse = false;
    if (cluster_running && recorded != nullptr && !recorded->config_path().empty() &&
        fs::is_regular_file(recorded->config_path())) {
      reuse = true;
      s = *recorded;
      s.clear_pid();
      out << plan.name << ": restarting on " << s.grpc_address() << " with its recorded config " << s.config_path()
          << "\n";
    }
    for (const std::string& address : {s.grpc_address(), s.admin_address()}) {
      if (!PortIsFree(PortOf(address))) {
        failure = absl::FailedPreconditionError(absl::StrCat(
            plan.name, ": ", address, " is in use by another process; stop it, or start the cluster elsewhere ",
            "(--base-port, or the ports in --config)"));
        break;
      }
    }
    if (!failure.ok()) break;
    std::string binary_path = absl::StrCat(c.bin_dir(), "/", plan.binary);
    if (access(binary_path.c_str(), X_OK) != 0) {
      failure = absl::NotFoundError(absl::StrCat("cannot find ", binary_path, " (build first: make build)"));
      break;
    }
    if (auto w = reuse ? absl::OkStatus() : core::WriteFileAtomic(s.config_path(), plan.config); !w.ok()) {
      failure = w;
      break;
    }
    auto pid = Spawn(binary_path, s.config_path(), s.log_path());
    if (!pid.ok()) {
      failure = pid.status();
      break;
    }
    s.set_pid(*pid);
    started.emplace_back(s, *pid);
    *state.add_services() = s;
  }
  for (const auto& [s, pid] : started) {
    if (!failure.ok()) break;
    failure = AwaitServing(s, pid, c.startup_timeout_seconds(), credentials);
  }
  if (!failure.ok()) {
    for (const auto& [s, pid] : started) StopChild(pid, std::chrono::seconds(5));
    // Remember only what is still running from before, and while some of it runs, the records of its crashed
    // services too (their addresses and config files are what the running ones dial).
    v1::LocalClusterState kept;
    for (const auto& p : previous.services()) {
      if (cluster_running || IsRunning(p.pid(), p.binary())) *kept.add_services() = p;
    }
    if (kept.services_size() > 0) {
      (void)SaveState(data_dir, kept);
    } else {
      std::error_code remove_ec;
      fs::remove(StatePath(data_dir), remove_ec);  // nothing runs: no cluster is recorded
    }
    return failure;
  }
  ACCELOPT_RETURN_IF_ERROR(SaveState(data_dir, state));
  out << (started.empty() ? "cluster already running" : "cluster up") << " (data dir " << data_dir
      << (secure ? "; TLS, mutual TLS inside, tokens; admin token in tls/admin.token" : "") << ")\n";
  PrintStatusTable(state, data_dir, out);
  return absl::OkStatus();
}

absl::Status Down(const std::string& data_dir_arg, std::ostream& out) {
  std::string data_dir = fs::absolute(data_dir_arg).lexically_normal().string();
  ACCELOPT_ASSIGN_OR_RETURN(v1::LocalClusterState state, LoadState(data_dir));
  ACCELOPT_ASSIGN_OR_RETURN(auto lock, ClusterLock::Acquire(data_dir));
  // Stop in reverse start order: the orchestrator first.
  for (int i = state.services_size() - 1; i >= 0; --i) {
    const auto& s = state.services(i);
    if (!IsRunning(s.pid(), s.binary())) {
      out << s.name() << ": not running\n";
      continue;
    }
    bool killed = StopProcess(s.pid(), s.binary(), std::chrono::seconds(15));
    out << s.name() << ": " << (killed ? "killed after the drain deadline" : "stopped") << "\n";
  }
  std::error_code ec;
  fs::remove(StatePath(data_dir), ec);
  out << "cluster down\n";
  return absl::OkStatus();
}

absl::Status Status(const std::string& data_dir_arg, std::ostream& out, bool json) {
  std::string data_dir = fs::absolute(data_dir_arg).lexically_normal().string();
  ACCELOPT_ASSIGN_OR_RETURN(v1::LocalClusterState state, LoadState(data_dir));
  std::vector<std::string> unhealthy = PrintStatusTable(state, data_dir, out, json);
  if (!unhealthy.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("not serving: ", absl::StrJoin(unhealthy, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace accelopt::cli

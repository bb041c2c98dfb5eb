#include "tests/e2e/e2e_cluster.h"

#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/core/file.h"
#include "libs/core/log.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::e2e {
namespace {

constexpr auto kStartupTimeout = std::chrono::seconds(30);

std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

v1::JobSpec ExampleJobSpec(const std::string& example, const std::string& name, uint64_t seed,
                           const std::string& provider) {
  const std::string dir = absl::StrCat(kSourceDir, "/examples/", example, "/");
  v1::JobSpec spec;
  spec.set_name(name);
  spec.set_preset("small");
  spec.set_seed(seed);
  spec.set_device(v1::DEVICE_SIM_TRN1);
  v1::Problem* p = spec.mutable_problem();
  p->set_name(example);
  p->set_reference_source(*core::ReadFile(dir + "reference_small.py"));
  p->set_reference_filename("reference_small.py");
  p->set_metadata_yaml(*core::ReadFile(dir + "problem_small.yaml"));
  spec.mutable_baseline()->set_source(*core::ReadFile(dir + "kernel.py"));
  spec.mutable_search()->set_samples_per_plan(1);
  for (v1::ModelSpec* m : {spec.mutable_models()->mutable_planner(), spec.mutable_models()->mutable_executor(),
                           spec.mutable_models()->mutable_summarizer()}) {
    m->set_provider(provider);
    if (provider == "openai") {
      m->set_endpoint("double");
      m->set_model("double");
    }
  }
  spec.mutable_profile()->set_seeds(1);
  return spec;
}

std::string JsonString(const std::string& text) { return absl::StrCat("\"", core::JsonEscape(text), "\""); }

absl::StatusOr<std::unique_ptr<E2eCluster>> E2eCluster::Start(const std::string& name, ClusterOptions options) {
  // 0711: the profilers' sandbox users pass through to their scratch directories.
  auto scratch = std::make_unique<testing::ScratchDir>(absl::StrCat("e2e_", name), 0711);
  if (scratch->path().empty()) return absl::UnavailableError("cannot create the cluster's directory");
  const std::string dir = scratch->path();
  std::unique_ptr<E2eCluster> c(new E2eCluster(std::move(scratch), std::move(options)));
  // A cluster that does not start keeps its configs and logs for the test that will fail on the error.
  absl::Cleanup keep_on_error = [&c] { c->scratch_->Keep(); };
  if (absl::Status s = c->StartLlmDouble(); !s.ok()) return s;

  for (const std::string& p :
       {std::string("planner"), std::string("executor"), std::string("memory"), std::string("orchestrator")}) {
    c->address_[p] = absl::StrCat("127.0.0.1:", testing::PickFreePort());
    c->admin_[p] = absl::StrCat("127.0.0.1:", testing::PickFreePort());
  }
  for (int i = 0; i < c->options_.profilers; ++i) {
    const std::string p = absl::StrCat("profiler-", i);
    c->address_[p] = absl::StrCat("127.0.0.1:", testing::PickFreePort());
    c->admin_[p] = absl::StrCat("127.0.0.1:", testing::PickFreePort());
  }
  const std::string llm = absl::StrCat("llm: {max_attempts: ", c->options_.llm_max_attempts,
                                       ", initial_backoff_seconds: 0.05, max_backoff_seconds: 0.2, "
                                       "default_timeout_seconds: 30, endpoints: [{name: double, base_url: \"",
                                       c->llm_base_url_,
                                       "\", models: [{name: double, price: "
                                       "{prompt_usd_per_mtok: 1, completion_usd_per_mtok: 2}}]}]}\n");
  if (auto s = c->StartService("planner", "accelopt-planner", c->ServerYaml("planner") + llm); !s.ok()) return s;
  if (auto s = c->StartService("executor", "accelopt-executor", c->ServerYaml("executor") + llm); !s.ok()) return s;
  const std::string data_root = c->options_.data_root.empty() ? dir : c->options_.data_root;
  if (auto s = c->StartService("memory", "accelopt-memory",
                               absl::StrCat(c->ServerYaml("memory"), llm, "data_dir: \"", data_root, "/memory\"\n"));
      !s.ok()) {
    return s;
  }
  std::string workers;
  for (int i = 0; i < c->options_.profilers; ++i) {
    const std::string p = absl::StrCat("profiler-", i);
    // Scratch directories in the cluster's directory: a profiler killed with SIGKILL leaves them there.
    if (auto s =
            c->StartService(p, "accelopt-profiler",
                            absl::StrCat(c->ServerYaml(p), "device: sim-trn1\nslots: 1\ndefault_timeout_seconds: 60\n",
                                         "scratch_root: \"", dir, "\"\n"));
        !s.ok()) {
      return s;
    }
    absl::StrAppend(&workers, i == 0 ? "" : ", ", "\"", c->address_[p], "\"");
  }
  auto route = [&](const std::string& p) {
    return c->options_.route ? c->options_.route(p, c->address_[p]) : c->address_[p];
  };
  const std::string orchestrator =
      absl::StrCat(c->ServerYaml("orchestrator"), "data_dir: \"", data_root, "/orchestrator\"\n", "planner_address: \"",
                   route("planner"), "\"\n", "executor_address: \"", route("executor"), "\"\n", "memory_address: \"",
                   route("memory"), "\"\n", "profiler_addresses: [", workers, "]\n", "worker_poll_seconds: 0.2\n",
                   "agent_timeout_seconds: ", c->options_.agent_timeout_seconds, "\n");
  if (auto s = c->StartService("orchestrator", "accelopt-orchestrator", orchestrator); !s.ok()) return s;
  c->jobs_ = v1::JobService::NewStub(Channel(c->address_["orchestrator"]));
  c->memory_ = v1::MemoryService::NewStub(Channel(c->address_["memory"]));
  std::move(keep_on_error).Cancel();
  return c;
}

E2eCluster::~E2eCluster() {
  // Orchestrator first, so nothing is dispatched to workers that are going away.
  processes_.erase("orchestrator");
  processes_.clear();
}

std::string E2eCluster::ServerYaml(const std::string& process) {
  return absl::StrCat("server: {grpc_address: \"", address_[process], "\", admin_address: \"", admin_[process],
                      "\", drain_seconds: 1}\n");
}

absl::Status E2eCluster::StartLlmDouble() {
  const std::string script = absl::StrCat(dir_, "/llm_script.json");
  std::ofstream(script) << options_.llm_script;
  const std::string log = absl::StrCat(dir_, "/llm-double.log");
  auto p = testing::ChildProcess::Start({kBinDir + "/accelopt-llm-double", "--port", "0", "--script", script}, log);
  if (!p.ok()) return p.status();
  processes_["llm-double"] = std::make_unique<testing::ChildProcess>(*std::move(p));
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string out = processes_["llm-double"]->Output();
    const size_t at = out.find("listening on ");
    if (at != std::string::npos && out.find('\n', at) != std::string::npos) {
      std::string host_port = out.substr(at + 13, out.find('\n', at) - at - 13);
      llm_base_url_ = absl::StrCat("http://", host_port, "/v1");
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("the LLM double did not start: ", LogTail("llm-double")));
}

absl::Status E2eCluster::StartService(const std::string& process, const std::string& binary,
                                      const std::string& config) {
  const std::string path = absl::StrCat(dir_, "/", process, ".yaml");
  std::ofstream(path) << config;
  config_path_[process] = path;
  binary_[process] = binary;
  return RestartProcess(process);
}

absl::Status E2eCluster::RestartProcess(const std::string& process) {
  // The ports of a process killed a moment ago can still be busy: a process that exits while starting is
  // started again, for up to kStartupTimeout in all.
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  while (true) {
    auto p = testing::ChildProcess::Start({kBinDir + "/" + binary_[process], "--config", config_path_[process]},
                                          absl::StrCat(dir_, "/", process, ".log"));
    if (!p.ok()) return p.status();
    processes_[process] = std::make_unique<testing::ChildProcess>(*std::move(p));
    while (std::chrono::steady_clock::now() < deadline && Running(process)) {
      if (testing::WaitForServing(address_[process], std::chrono::milliseconds(500)).ok()) return absl::OkStatus();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(process, " is not SERVING at ", address_[process], ": ", LogTail(process)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

absl::Status E2eCluster::KillOrchestrator() { return Kill("orchestrator"); }

absl::Status E2eCluster::RestartOrchestrator() { return RestartProcess("orchestrator"); }

void E2eCluster::KillProfiler(int index) { (void)Kill(absl::StrCat("profiler-", index)); }

absl::Status E2eCluster::Kill(const std::string& process) {
  auto it = processes_.find(process);
  if (it == processes_.end()) return absl::FailedPreconditionError(absl::StrCat(process, " is not running"));
  it->second->Signal(SIGCONT);  // a stopped process must run to die
  it->second->Signal(SIGKILL);
  (void)it->second->WaitForExit(std::chrono::seconds(10));
  processes_.erase(it);
  return absl::OkStatus();
}

absl::Status E2eCluster::Restart(const std::string& process) {
  if (!binary_.count(process)) return absl::NotFoundError(absl::StrCat("no process named ", process));
  if (processes_.count(process)) return absl::FailedPreconditionError(absl::StrCat(process, " is running"));
  return RestartProcess(process);
}

absl::Status E2eCluster::Signal(const std::string& process, int sig) {
  auto it = processes_.find(process);
  if (it == processes_.end()) return absl::FailedPreconditionError(absl::StrCat(process, " is not running"));
  it->second->Signal(sig);
  return absl::OkStatus();
}

bool E2eCluster::Running(const std::string& process) {
  auto it = processes_.find(process);
  if (it == processes_.end()) return false;
  if (!it->second->WaitForExit(std::chrono::milliseconds(0)).has_value()) return true;
  processes_.erase(it);
  return false;
}

absl::StatusOr<v1::WorkerStatus> E2eCluster::WorkerStatus(int index) {
  auto stub = v1::ProfilerService::NewStub(Channel(profiler_address(index)));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::WorkerStatus status;
  grpc::Status s = stub->GetWorkerStatus(&context, v1::GetWorkerStatusRequest(), &status);
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return status;
}

std::string E2eCluster::LogTail(const std::string& process) const {
  auto text = core::ReadFile(absl::StrCat(dir_, "/", process, ".log"));
  if (!text.ok()) return "(no log)";
  return text->size() > 3000 ? text->substr(text->size() - 3000) : *text;
}

}  // namespace accelopt::e2e

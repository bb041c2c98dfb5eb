// A whole AccelOpt cluster as real processes for end-to-end tests: the LLM test double, planner, executor,
// memory, two profiler workers on sim-trn1 and the orchestrator, on free loopback ports, each with its own
// config and log under one directory. Processes can be killed (SIGKILL) and restarted.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "accelopt/v1/job_service.grpc.pb.h"
#include "accelopt/v1/memory_service.grpc.pb.h"
#include "accelopt/v1/profiler_service.grpc.pb.h"
#include "libs/testing/child_process.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::e2e {

// The built binaries (accelopt-*, accelopt-llm-double, accelopt).
inline const std::string kBinDir = ACCELOPT_BINARY_DIR "/bin";
inline const std::string kSourceDir = ACCELOPT_SOURCE_DIR;

struct ClusterOptions {
  // The double's script (JSON, docs/agents.md); the default answers nothing (for builtin-only jobs).
  std::string llm_script = R"({"rules": []})";
  // LlmConfig.max_attempts of the agents (1 = failures are not retried).
  int llm_max_attempts = 3;
  int profilers = 2;
  // The address the orchestrator is given for each agent service ("planner", "executor", "memory"), from
  // its real address; e.g. a FaultProxy in front of it. Unset: the real address.
  std::function<std::string(const std::string& process, const std::string& address)> route;
  // Where the orchestrator and memory keep their stores (<data_root>/orchestrator, <data_root>/memory),
  // e.g. a small filesystem. Unset: the cluster's directory.
  std::string data_root;
  // OrchestratorConfig.agent_timeout_seconds: the deadline of each planner, executor or memory call.
  int agent_timeout_seconds = 60;
};

class E2eCluster {
 public:
  // Starts every process and waits until each is SERVING. `name` names the directory.
  static absl::StatusOr<std::unique_ptr<E2eCluster>> Start(const std::string& name, ClusterOptions options);
  // Kills every process, then removes the cluster's directory (kept when the test failed).
  ~E2eCluster();

  // SIGKILL, then start again on the same ports and data; waits for SERVING.
  absl::Status KillOrchestrator();
  absl::Status RestartOrchestrator();
  void KillProfiler(int index);
  // Any process by name ("planner", "executor", "memory", "orchestrator", "profiler-<i>"): SIGKILL and
  // wait for its exit; start it again on the same ports and data and wait for SERVING; send a signal
  // (e.g. SIGSTOP, SIGCONT).
  absl::Status Kill(const std::string& process);
  absl::Status Restart(const std::string& process);
  absl::Status Signal(const std::string& process, int sig);
  // Whether the process is running (started and not killed, and has not exited by itself).
  bool Running(const std::string& process);
  std::string address(const std::string& process) const { return address_.at(process); }

  std::string orchestrator_address() const { return address_.at("orchestrator"); }
  std::string profiler_address(int index) const { return address_.at("profiler-" + std::to_string(index)); }
  // The Prometheus /metrics address (host:port) of each process by name: orchestrator, planner, executor,
  // memory, profiler-0, ...
  const std::map<std::string, std::string>& metrics_addresses() const { return admin_; }
  // "http://127.0.0.1:<port>/v1": the agent services' one configured endpoint, named "double", serving the
  // model "double".
  std::string llm_base_url() const { return llm_base_url_; }
  const std::string& dir() const { return dir_; }

  v1::JobService::Stub& jobs() { return *jobs_; }
  v1::MemoryService::Stub& memory() { return *memory_; }
  // The worker's status, or the RPC error (e.g. after it was killed).
  absl::StatusOr<v1::WorkerStatus> WorkerStatus(int index);
  // The last lines of a process's log (for failure messages).
  std::string LogTail(const std::string& process) const;

 private:
  E2eCluster(std::unique_ptr<testing::ScratchDir> scratch, ClusterOptions options)
      : scratch_(std::move(scratch)), dir_(scratch_->path()), options_(std::move(options)) {}
  absl::Status StartLlmDouble();
  absl::Status StartService(const std::string& process, const std::string& binary, const std::string& config);
  absl::Status RestartProcess(const std::string& process);
  std::string ServerYaml(const std::string& process);

  std::unique_ptr<testing::ScratchDir> scratch_;
  std::string dir_;
  ClusterOptions options_;
  std::map<std::string, std::string> address_;
  std::map<std::string, std::string> admin_;
  std::map<std::string, std::string> config_path_;
  std::map<std::string, std::string> binary_;
  std::map<std::string, std::unique_ptr<testing::ChildProcess>> processes_;
  std::string llm_base_url_;
  std::unique_ptr<v1::JobService::Stub> jobs_;
  std::unique_ptr<v1::MemoryService::Stub> memory_;
};

// A job over examples/<example> at its small shape (reference_small.py, problem_small.yaml, kernel.py):
// preset small, sim-trn1, one sample per plan, one profile seed, every agent on `provider` ("openai" means
// the cluster's double: endpoint and model "double").
v1::JobSpec ExampleJobSpec(const std::string& example, const std::string& name, uint64_t seed,
                           const std::string& provider);

// JSON string literal contents for `text` (for building scripts).
std::string JsonString(const std::string& text);

}  // namespace accelopt::e2e

// Every service config shipped under deploy/kubernetes (base, overlays, components) loads into its service's
// config message: no unknown key, no wrong type, so a typo fails here rather than in a pod's CrashLoopBackOff.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "accelopt/v1/config.pb.h"
#include "libs/config/config_loader.h"
#include "libs/config/validate.h"

namespace accelopt {
namespace {

namespace fs = std::filesystem;

// The config message of the service a file is for, by the file's name ("profiler-neuron.yaml" -> profiler).
std::unique_ptr<google::protobuf::Message> MessageFor(const std::string& file_name) {
  if (file_name.rfind("orchestrator", 0) == 0) return std::make_unique<v1::OrchestratorConfig>();
  if (file_name.rfind("planner", 0) == 0) return std::make_unique<v1::PlannerConfig>();
  if (file_name.rfind("executor", 0) == 0) return std::make_unique<v1::ExecutorConfig>();
  if (file_name.rfind("memory", 0) == 0) return std::make_unique<v1::MemoryConfig>();
  if (file_name.rfind("profiler", 0) == 0) return std::make_unique<v1::ProfilerConfig>();
  return nullptr;
}

TEST(DeployConfigsTest, EveryShippedServiceConfigLoadsAndItsServerBlockIsValid) {
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(ACCELOPT_SOURCE_DIR "/deploy/kubernetes")) {
    const fs::path& path = entry.path();
    if (path.extension() != ".yaml" || path.parent_path().filename() != "configs") continue;
    std::unique_ptr<google::protobuf::Message> config = MessageFor(path.filename().string());
    ASSERT_NE(config, nullptr) << path << ": no service of that name";
    ASSERT_TRUE(config::LoadConfigFile(path.string(), config.get()).ok())
        << path << ": " << config::LoadConfigFile(path.string(), config.get());
    const auto* server_field = config->GetDescriptor()->FindFieldByName("server");
    ASSERT_NE(server_field, nullptr) << path;
    v1::ServerConfig server;
    server.CopyFrom(config->GetReflection()->GetMessage(*config, server_field));
    config::ApplyServerDefaults(&server);
    EXPECT_TRUE(config::ValidateServerConfig(server).ok()) << path << ": " << config::ValidateServerConfig(server);
    // Off loopback a listener needs TLS or an explicit `insecure: true`.
    EXPECT_TRUE(server.insecure() || !server.tls().cert_file().empty()) << path;
    ++checked;
  }
  EXPECT_GE(checked, 11);  // base 5, eks-trn's neuron profiler, the tls component's 5
}

}  // namespace
}  // namespace accelopt

// accelopt-executor: the executor agent, which turns a kernel and a plan into new kernel sources
#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/llm/agent_runtime.h"
#include "libs/llm/default_models.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/security/call_authorizer.h"
#include "services/executor/executor.h"
#include "services/executor/executor_config.h"
#include "services/executor/executor_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-executor: the executor agent, which turns a kernel and a plan into new kernel sources\n\n"
    "Usage: accelopt-executor [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.ExecutorConfig in proto/accelopt/v1/config.proto (docs/configuration.md).\n"
    "Proxies: HTTPS_PROXY, HTTP_PROXY, NO_PROXY. Agents and prompts: docs/agents.md.";
constexpr char kBinary[] = "accelopt-executor";
}  // namespace

int main(int argc, char** argv) {
  using namespace accelopt;
  rpc::BlockShutdownSignals();
  config::ParseServiceFlags(argc, argv, kUsage);
  v1::ExecutorConfig config;
  if (auto s = config::LoadServiceConfig(&config); !s.ok()) return rpc::FailStartup(kBinary, s);
  executor::ApplyExecutorDefaults(&config);
  if (auto s = executor::ValidateExecutorConfig(config); !s.ok()) return rpc::FailStartup(kBinary, s);
  auto registry = std::make_shared<prometheus::Registry>();

  auto runtime = llm::StartAgentRuntime(config.llm(), registry, {"executor_system", "executor_user"});
  if (!runtime.ok()) return rpc::FailStartup(kBinary, runtime.status());
  llm::ProviderRegistry<llm::ExecutorModel> models;
  llm::RegisterDefaultModels(*runtime, models);
  // Syntax checks block for tens of milliseconds each; two threads keep up with a typical K.
  boost::asio::thread_pool pool(2);
  executor::ExecutorMetrics metrics = executor::ExecutorMetrics::Create(*registry);
  executor::PythonSyntaxChecker checker;
  executor::Executor executor(models, checker, pool, metrics);
  auto auth = security::MakeServiceAuth(config.server().auth(), "executor");
  if (!auth.ok()) return rpc::FailStartup("accelopt-executor", auth.status());
  executor::ExecutorServiceImpl service(executor, auth->authorizer());
  rpc::ServeOptions serve;
  serve.models = {models.Names(), [&models](const v1::ModelSpec& m) { return models.FindValid(m).status(); }};
  int code = rpc::RunServer("executor", config, config.server(), registry, {&service}, std::move(serve));
  pool.join();
  return code;
}

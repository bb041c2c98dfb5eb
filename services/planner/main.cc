// accelopt-planner: the planner agent, which turns a kernel and its profile into optimization plans
#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/llm/agent_runtime.h"
#include "libs/llm/default_models.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/security/call_authorizer.h"
#include "services/planner/planner.h"
#include "services/planner/planner_config.h"
#include "services/planner/planner_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-planner: the planner agent, which turns a kernel and its profile into optimization plans\n\n"
    "Usage: accelopt-planner [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.PlannerConfig in proto/accelopt/v1/config.proto (docs/configuration.md).\n"
    "Proxies: HTTPS_PROXY, HTTP_PROXY, NO_PROXY. Agents and prompts: docs/agents.md.";
constexpr char kBinary[] = "accelopt-planner";
}  // namespace

int main(int argc, char** argv) {
  using namespace accelopt;
  rpc::BlockShutdownSignals();
  config::ParseServiceFlags(argc, argv, kUsage);
  v1::PlannerConfig config;
  if (auto s = config::LoadServiceConfig(&config); !s.ok()) return rpc::FailStartup(kBinary, s);
  planner::ApplyPlannerDefaults(&config);
  if (auto s = planner::ValidatePlannerConfig(config); !s.ok()) return rpc::FailStartup(kBinary, s);
  auto registry = std::make_shared<prometheus::Registry>();

  auto runtime = llm::StartAgentRuntime(config.llm(), registry, {"planner_system", "planner_user"});
  if (!runtime.ok()) return rpc::FailStartup(kBinary, runtime.status());
  llm::ProviderRegistry<llm::PlannerModel> models;
  llm::RegisterDefaultModels(*runtime, models);
  boost::asio::thread_pool pool(2);
  planner::PlannerMetrics metrics = planner::PlannerMetrics::Create(*registry);
  planner::Planner planner(models, pool, metrics);
  auto auth = security::MakeServiceAuth(config.server().auth(), "planner");
  if (!auth.ok()) return rpc::FailStartup("accelopt-planner", auth.status());
  planner::PlannerServiceImpl service(planner, auth->authorizer());
  rpc::ServeOptions serve;
  serve.models = {models.Names(), [&models](const v1::ModelSpec& m) { return models.FindValid(m).status(); }};
  int code = rpc::RunServer("planner", config, config.server(), registry, {&service}, std::move(serve));
  pool.join();
  return code;
}

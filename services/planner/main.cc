// accelopt-planner: the planner agent, which turns a kernel and its profile into optimization plans
#include <memory>

#include "libs/config/service_flags.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "services/planner/planner_config.h"
#include "services/planner/planner_service.h"

namespace {
constexpr char kUsage[] =
    "accelopt-planner: the planner agent, which turns a kernel and its profile into optimization plans\n\n"
    "Usage: accelopt-planner [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "Config keys: accelopt.v1.PlannerConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  accelopt::rpc::BlockShutdownSignals();
  accelopt::config::ParseServiceFlags(argc, argv, kUsage);
  accelopt::v1::PlannerConfig config;
  if (auto s = accelopt::config::LoadServiceConfig(&config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-planner", s);
  }
  accelopt::planner::ApplyPlannerDefaults(&config);
  if (auto s = accelopt::planner::ValidatePlannerConfig(config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-planner", s);
  }
  auto registry = std::make_shared<prometheus::Registry>();
  accelopt::planner::PlannerServiceImpl service;
  return accelopt::rpc::RunServer("planner", config, config.server(), registry, {&service});
}

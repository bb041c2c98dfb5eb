// accelopt-memory: the summarizer agent and the optimization memory
#include <algorithm>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/config/service_flags.h"
#include "libs/core/log.h"
#include "libs/llm/agent_runtime.h"
#include "libs/rpc/server_runner.h"
#include "libs/rpc/service_main.h"
#include "libs/security/call_authorizer.h"
#include "libs/storage/checkpoint_command.h"
#include "libs/storage/kv_store.h"
#include "services/memory/experience_store.h"
#include "services/memory/memory_config.h"
#include "services/memory/memory_metrics.h"
#include "services/memory/memory_service.h"
#include "services/memory/summarizer_registry.h"

namespace {
constexpr char kUsage[] =
    "accelopt-memory: the summarizer agent and the optimization memory\n\n"
    "Usage: accelopt-memory [--config FILE] [--port N] [--admin_port N] [--log_level LEVEL]\n"
    "       accelopt-memory [--config FILE] --checkpoint DIR   (back up the experience store, also while serving)\n"
    "Config keys: accelopt.v1.MemoryConfig in proto/accelopt/v1/config.proto (docs/configuration.md).";
}  // namespace

int main(int argc, char** argv) {
  accelopt::rpc::BlockShutdownSignals();
  accelopt::config::ParseServiceFlags(argc, argv, kUsage);
  accelopt::v1::MemoryConfig config;
  if (auto s = accelopt::config::LoadServiceConfig(&config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-memory", s);
  }
  accelopt::memory::ApplyMemoryDefaults(&config);
  if (auto s = accelopt::memory::ValidateMemoryConfig(config); !s.ok()) {
    return accelopt::rpc::FailStartup("accelopt-memory", s);
  }
  if (auto code = accelopt::storage::RunCheckpointCommand(config.data_dir(), "accelopt-memory")) return *code;
  // State is opened before the server starts, so health turns SERVING only when it is usable.
  auto store = accelopt::storage::KvStore::Open(config.data_dir(), accelopt::memory::ExperienceStore::Families());
  if (!store.ok()) return accelopt::rpc::FailStartup("accelopt-memory", store.status());
  auto experiences = accelopt::memory::ExperienceStore::Open(store->get());
  if (!experiences.ok()) return accelopt::rpc::FailStartup("accelopt-memory", experiences.status());

  auto registry = std::make_shared<prometheus::Registry>();
  auto runtime = accelopt::llm::StartAgentRuntime(config.llm(), registry, {"summarizer_system", "summarizer_user"});
  if (!runtime.ok()) return accelopt::rpc::FailStartup("accelopt-memory", runtime.status());

  accelopt::memory::SummarizerRegistry summarizers;
  accelopt::memory::RegisterDefaultModels(*runtime, config, summarizers);
  accelopt::core::SetLogService("memory");
  ACCELOPT_LOG(INFO)
          .With("experiences", std::to_string((*experiences)->Count()))
          .With("summarizers", absl::StrJoin(summarizers.Names(), ","))
      << "memory opened";
  auto metrics = accelopt::memory::MemoryMetrics::Create(*registry);
  // RocksDB writes and summarizer bookkeeping; model calls wait on their own client threads.
  boost::asio::thread_pool pool(std::clamp(std::thread::hardware_concurrency(), 2u, 8u));
  auto auth = accelopt::security::MakeServiceAuth(config.server().auth(), "memory");
  if (!auth.ok()) return accelopt::rpc::FailStartup("accelopt-memory", auth.status());
  accelopt::memory::MemoryServiceImpl service(experiences->get(), &summarizers, &metrics, &pool, auth->authorizer());
  accelopt::rpc::ServeOptions serve;
  serve.models = {summarizers.Names(),
                  [&summarizers](const accelopt::v1::ModelSpec& m) { return summarizers.FindValid(m).status(); }};
  // Readiness: NOT_SERVING while the store cannot take writes (disk full, corruption).
  accelopt::storage::KvStore* state = store->get();
  serve.readiness = [state] { return state->Health(); };
  int code = accelopt::rpc::RunServer("memory", config, config.server(), registry, {&service}, std::move(serve));
  // RunServer returns once every RPC has finished, and a SummarizeIteration finishes only after all its
  // summarizer calls answered: nothing is left to touch the store or the summarizers.
  pool.join();
  return code;
}

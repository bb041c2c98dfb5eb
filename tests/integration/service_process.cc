#include "tests/integration/service_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace accelopt::integration {

ServiceProcess StartService(const std::string& name, const std::string& dir, double drain_seconds) {
  int port = testing::PickFreePort();
  int admin = testing::PickFreePort();
  std::string config = absl::StrCat(dir, "/", name, ".yaml");
  std::ofstream(config) << "server: {drain_seconds: " << drain_seconds << "}\n"
                        << (name == "orchestrator" || name == "memory"
                                ? absl::StrCat("data_dir: ", dir, "/", name, "-data\n")
                                : "")
                        << (name == "profiler" ? absl::StrCat("scratch_root: ", dir, "\n") : "");
  auto p = testing::ChildProcess::Start({kBinDir + "/accelopt-" + name, "--config", config, "--port",
                                         std::to_string(port), "--admin_port", std::to_string(admin)},
                                        absl::StrCat(dir, "/", name, ".log"));
  EXPECT_TRUE(p.ok()) << p.status();
  return {name, absl::StrCat("127.0.0.1:", port), absl::StrCat("127.0.0.1:", admin), std::move(*p)};
}

}  // namespace accelopt::integration

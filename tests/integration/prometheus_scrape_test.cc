// A real Prometheus server (Debian's `prometheus`) scrapes the five services; its HTTP API must report every
// target up.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "libs/testing/child_process.h"
#include "libs/testing/http_get.h"
#include "libs/testing/scratch_dir.h"
#include "libs/testing/wait_until.h"
#include "tests/integration/service_process.h"

namespace accelopt::integration {
namespace {

using namespace std::chrono_literals;

// Target health from Prometheus's /api/v1/targets: scrape URL -> "up" / "down" / "unknown".
std::map<std::string, std::string> TargetHealth(const std::string& prometheus) {
  std::map<std::string, std::string> health;
  auto body = testing::HttpGet(prometheus, "/api/v1/targets");
  if (!body.ok()) return health;
  google::protobuf::Struct json;
  if (!google::protobuf::util::JsonStringToMessage(*body, &json).ok()) return health;
  const auto& active = json.fields().at("data").struct_value().fields().at("activeTargets").list_value();
  for (const auto& t : active.values()) {
    const auto& f = t.struct_value().fields();
    health[f.at("scrapeUrl").string_value()] = f.at("health").string_value();
  }
  return health;
}

TEST(PrometheusScrapeTest, RealPrometheusSeesEveryServiceUp) {
  const std::string prometheus_bin = "/usr/bin/prometheus";
  ASSERT_TRUE(std::filesystem::exists(prometheus_bin)) << "install the prometheus package (make deps)";
  testing::ScratchDir scratch("", integration::kServiceDirMode);
  const std::string& dir = scratch.path();
  std::vector<ServiceProcess> services;
  for (const auto& name : kServiceNames) services.push_back(StartService(name, dir));
  std::string targets;
  for (auto& s : services) {
    ASSERT_TRUE(testing::WaitForServing(s.grpc_address, 20s).ok()) << s.name << s.process.Output();
    absl::StrAppend(&targets, targets.empty() ? "" : ", ", "'", s.metrics_address, "'");
  }
  std::ofstream(dir + "/prometheus.yml") << "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                                         << "scrape_configs:\n"
                                         << "  - job_name: accelopt\n"
                                         << "    static_configs: [{targets: [" << targets << "]}]\n";
  std::string web = absl::StrCat("127.0.0.1:", testing::PickFreePort());
  auto prometheus =
      testing::ChildProcess::Start({prometheus_bin, "--config.file=" + dir + "/prometheus.yml",
                                    "--storage.tsdb.path=" + dir + "/tsdb", "--web.listen-address=" + web},
                                   dir + "/prometheus.log");
  ASSERT_TRUE(prometheus.ok());

  // Poll until all five targets have been scraped successfully (or the deadline passes).
  std::map<std::string, std::string> health;
  auto all_up = [&] {
    health = TargetHealth(web);
    if (health.size() != services.size()) return false;
    for (const auto& [url, h] : health)
      if (h != "up") return false;
    return true;
  };
  absl::Status waited = testing::WaitUntil(all_up, 60s, "all five targets up in Prometheus");
  ASSERT_TRUE(waited.ok()) << waited << "\n" << prometheus->Output();
  for (auto& s : services) {
    EXPECT_EQ(health["http://" + s.metrics_address + "/metrics"], "up") << s.name;
  }
  // The scraped series are queryable: one `up` series per service, all 1.
  auto query = testing::HttpGet(web, "/api/v1/query?query=sum(up%7Bjob%3D%22accelopt%22%7D)");
  ASSERT_TRUE(query.ok());
  EXPECT_NE(query->find("\"5\""), std::string::npos) << *query;
}

}  // namespace
}  // namespace accelopt::integration

#include "libs/metrics/process_collector.h"

#include <gtest/gtest.h>

#include <map>

#include "libs/metrics/metrics_exposer.h"
#include "libs/testing/http_get.h"

namespace accelopt::metrics {
namespace {

std::map<std::string, double> Values(const ProcessCollector& collector) {
  std::map<std::string, double> out;
  for (const auto& family : collector.Collect()) {
    const auto& metric = family.metric.front();
    out[family.name] = family.type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
  }
  return out;
}

TEST(ProcessCollectorTest, ReportsThisProcessFromProc) {
  ProcessCollector collector("unit", "1.2.3");
  auto values = Values(collector);
  EXPECT_GT(values["process_resident_memory_bytes"], 1 << 20);
  EXPECT_GE(values["process_virtual_memory_bytes"], values["process_resident_memory_bytes"]);
  EXPECT_GE(values["process_open_fds"], 3);  // stdin, stdout, stderr at least
  EXPECT_GT(values["process_max_fds"], values["process_open_fds"]);
  EXPECT_GT(values["process_start_time_seconds"], 1.6e9);
  EXPECT_EQ(values["accelopt_build_info"], 1);
}

TEST(ProcessCollectorTest, CpuTimeGrowsWithWork) {
  ProcessCollector collector("unit", "1.2.3");
  double before = Values(collector)["process_cpu_seconds_total"];
  volatile double sink = 0;
  for (int i = 0; i < 200'000'000; ++i) sink = sink + i * 0.5;
  EXPECT_GT(Values(collector)["process_cpu_seconds_total"], before);
}

TEST(ProcessCollectorTest, ServedByTheExposerWithBuildLabels) {
  auto exposer = MetricsExposer::Start("127.0.0.1:0", std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  (*exposer)->AddCollectable(std::make_shared<ProcessCollector>("planner", "9.9.9"));
  auto body = testing::HttpGet((*exposer)->address(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_NE(body->find("accelopt_build_info{component=\"planner\",version=\"9.9.9\"} 1"), std::string::npos) << *body;
  EXPECT_NE(body->find("process_resident_memory_bytes "), std::string::npos) << *body;
}

}  // namespace
}  // namespace accelopt::metrics

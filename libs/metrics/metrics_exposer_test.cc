#include "libs/metrics/metrics_exposer.h"

#include <gtest/gtest.h>

#include "libs/testing/http_get.h"
#include "prometheus/counter.h"

namespace accelopt::metrics {
namespace {

TEST(MetricsExposerTest, ServesRegisteredMetricsOnAFreePort) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("accelopt_test_total").Help("t").Register(*registry).Add({}).Increment(3);
  auto exposer = MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  auto body = testing::HttpGet((*exposer)->address(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_NE(body->find("accelopt_test_total 3"), std::string::npos) << *body;
}

TEST(MetricsExposerTest, BusyAddressIsAClearError) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto first = MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(first.ok());
  auto second = MetricsExposer::Start((*first)->address(), registry);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find((*first)->address()), std::string::npos);
}

}  // namespace
}  // namespace accelopt::metrics

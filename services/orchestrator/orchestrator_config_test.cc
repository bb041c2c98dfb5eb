#include "services/orchestrator/orchestrator_config.h"

#include <gtest/gtest.h>

namespace accelopt::orchestrator {
namespace {

TEST(OrchestratorConfigTest, DefaultsMatchTheLocalClusterAndAreValid) {
  v1::OrchestratorConfig c;
  ApplyOrchestratorDefaults(&c);
  EXPECT_TRUE(ValidateOrchestratorConfig(c).ok());
  EXPECT_EQ(c.planner_address(), "127.0.0.1:50051");
  ASSERT_EQ(c.profiler_addresses_size(), 1);
}

TEST(OrchestratorConfigTest, RejectsBothDnsAndStaticWorkersNamingTheField) {
  v1::OrchestratorConfig c;
  c.set_profiler_dns("profilers.accelopt.svc:50060");
  c.add_profiler_addresses("10.0.0.1:50060");
  ApplyOrchestratorDefaults(&c);
  absl::Status s = ValidateOrchestratorConfig(c);
  EXPECT_NE(s.message().find("profiler_dns"), std::string::npos) << s;
}

TEST(OrchestratorConfigTest, RejectsBadWorkerAddressByIndex) {
  v1::OrchestratorConfig c;
  c.add_profiler_addresses("127.0.0.1:1");
  c.add_profiler_addresses("nohost");
  ApplyOrchestratorDefaults(&c);
  EXPECT_NE(ValidateOrchestratorConfig(c).message().find("profiler_addresses[1]"), std::string::npos);
}

TEST(OrchestratorConfigTest, AgentRetryDefaultsAndBounds) {
  v1::OrchestratorConfig c;
  ApplyOrchestratorDefaults(&c);
  AgentRetryPolicy policy = AgentRetryPolicyFromConfig(c);
  EXPECT_EQ(policy.initial_backoff, absl::Milliseconds(200));
  EXPECT_EQ(policy.max_backoff, absl::Seconds(5));
  EXPECT_EQ(policy.max_elapsed, absl::Seconds(60));
  EXPECT_EQ(c.stall_seconds(), 300);
  c.mutable_agent_retry()->set_max_backoff_seconds(0.1);
  EXPECT_NE(ValidateOrchestratorConfig(c).message().find("agent_retry.max_backoff_seconds"), std::string::npos);
  c.mutable_agent_retry()->set_max_backoff_seconds(5);
  c.mutable_agent_retry()->set_max_elapsed_seconds(-1);
  EXPECT_NE(ValidateOrchestratorConfig(c).message().find("agent_retry.max_elapsed_seconds"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::orchestrator

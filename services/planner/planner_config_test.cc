#include "services/planner/planner_config.h"

#include <gtest/gtest.h>

namespace accelopt::planner {
namespace {

TEST(PlannerConfigTest, DefaultsAreValid) {
  v1::PlannerConfig c;
  ApplyPlannerDefaults(&c);
  EXPECT_TRUE(ValidatePlannerConfig(c).ok());
  EXPECT_EQ(c.llm().max_concurrency_per_endpoint(), 16);
}

TEST(PlannerConfigTest, RejectsNegativePricesNamingTheModel) {
  v1::PlannerConfig c;
  ApplyPlannerDefaults(&c);
  v1::LlmEndpoint* endpoint = c.mutable_llm()->add_endpoints();
  endpoint->set_name("vllm");
  endpoint->set_base_url("http://vllm:8000/v1");
  endpoint->add_models()->set_name("gpt-x");
  endpoint->mutable_models(0)->mutable_price()->set_prompt_usd_per_mtok(-1);
  absl::Status s = ValidatePlannerConfig(c);
  EXPECT_NE(s.message().find("llm.endpoints[0].models[0].price"), std::string::npos) << s;
}

}  // namespace
}  // namespace accelopt::planner
